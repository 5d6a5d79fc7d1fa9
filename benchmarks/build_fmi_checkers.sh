#!/usr/bin/env bash
# Build the two independent FMU checkers blocksim's exported FMUs are run through, offline:
#
#   - the FMI Compliance Checker (modelica-tools/FMUComplianceChecker, last commit c704b98,
#     release 2.0.4 and later fixes; FMI 1.0 and 2.0 only, its development has ended) on
#     FMI Library 2.0.3 (modelon-community/fmi-library, the tag its CMakeLists asks for);
#   - fmusim (modelica/Reference-FMUs, tag v0.0.39: the last tag that has it, v0.0.40 removed
#     it), the Modelica Association's importer for FMI 1.0, 2.0 and 3.0.
#
# usage: benchmarks/build_fmi_checkers.sh CHECKER_GIT FMIL_GIT REFFMUS_GIT [WORK_DIR]
#   *_GIT: local git repositories (bare or not) of the three projects; nothing is downloaded.
#   WORK_DIR (default /tmp/fmi-checkers): sources, builds and the two programs,
#   WORK_DIR/install/fmuCheck.linux64 and WORK_DIR/install/fmusim.
# Then: BLOCKSIM_FMU_CHECKER=WORK_DIR/install/fmuCheck.linux64 \
#       BLOCKSIM_FMUSIM=WORK_DIR/install/fmusim python -m pytest tests/fmi/test_fmi_checkers.py
#
# Needs gcc, make, git, python (for a cmake < 3.28 from the package index: FMIL 2.0.3's
# CMake reads target LOCATION properties, which CMake 4 refuses), and the Debian packages
# libxml2-dev, libsundials-dev (6.x; fmusim was written against SUNDIALS 7, which differs
# only in SUNContext_Create's first argument) and zlib1g-dev for fmusim. Takes ~20 s here.
set -euo pipefail

if [ $# -lt 3 ]; then
    sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
CHECKER_GIT=$(realpath "$1"); FMIL_GIT=$(realpath "$2"); REFFMUS_GIT=$(realpath "$3")
WORK=${4:-/tmp/fmi-checkers}
mkdir -p "$WORK/src" "$WORK/install"
WORK=$(realpath "$WORK")

# cmake 3.27 in a venv of its own (CMake 4 cannot configure FMIL 2.0.3)
if [ ! -x "$WORK/cmake3/bin/cmake" ]; then
    python -m venv "$WORK/cmake3"
    "$WORK/cmake3/bin/pip" install -q "cmake<3.28"
fi

# --- FMI Compliance Checker ------------------------------------------------------------
rm -rf "$WORK/src/checker" "$WORK/build-checker"
mkdir -p "$WORK/src/checker" "$WORK/build-checker"
git --git-dir="$CHECKER_GIT/.git" rev-parse HEAD >/dev/null 2>&1 && CHECKER_GIT="$CHECKER_GIT/.git"
git --git-dir="$CHECKER_GIT" archive HEAD | tar -x -C "$WORK/src/checker"
# Its CMakeLists clones FMIL 2.0.3 from the network (ExternalProject GIT_REPOSITORY); git's
# url.<base>.insteadOf, given through the environment only, turns that into the local repository.
(
    cd "$WORK/build-checker"
    export PATH="$WORK/cmake3/bin:$PATH"
    export GIT_CONFIG_COUNT=1
    export GIT_CONFIG_KEY_0="url.$FMIL_GIT.insteadOf"
    export GIT_CONFIG_VALUE_0="https://github.com/modelon-community/fmi-library.git"
    cmake -Wno-dev -DFMUCHK_INSTALL_PREFIX="$WORK/install" "$WORK/src/checker" > cmake.log
    make -j2 install > make.log
)

# --- fmusim ------------------------------------------------------------------------------
R="$WORK/src/reffmus-v0.0.39"
rm -rf "$R" "$WORK/src/fmil"
mkdir -p "$R" "$WORK/src/fmil"
git --git-dir="$REFFMUS_GIT/.git" rev-parse HEAD >/dev/null 2>&1 && REFFMUS_GIT="$REFFMUS_GIT/.git"
git --git-dir="$REFFMUS_GIT" archive v0.0.39 fmusim src include LICENSE.txt | tar -x -C "$R"
# minizip of zlib 1.3.1, the version fmusim's build uses, as FMIL's newest tree bundles it
git --git-dir="$FMIL_GIT/.git" rev-parse HEAD >/dev/null 2>&1 && FMIL_GIT="$FMIL_GIT/.git"
git --git-dir="$FMIL_GIT" archive HEAD ThirdParty/Zlib/zlib-1.3.1/contrib/minizip | tar -x -C "$WORK/src/fmil"
Z="$WORK/src/fmil/ThirdParty/Zlib/zlib-1.3.1/contrib/minizip"
gcc -O2 -w -o "$WORK/install/fmusim" '-DFMUSIM_VERSION="0.0.39"' -DSUN_COMM_NULL=NULL \
    -I"$R/fmusim" -I"$R/include" -I/usr/include/libxml2 -I"$Z" \
    "$R"/fmusim/*.c "$R/src/FMI.c" "$R/src/FMI1.c" "$R/src/FMI2.c" "$R/src/FMI3.c" \
    "$R/src/structured_variable_name.yy.c" "$R/src/structured_variable_name.tab.c" \
    "$Z/ioapi.c" "$Z/unzip.c" \
    -lxml2 -lz -lsundials_cvode -lsundials_nvecserial -lsundials_sunmatrixdense \
    -lsundials_sunlinsoldense -ldl -lm

"$WORK/install/fmusim" --version
"$WORK/install/fmuCheck.linux64" 2>&1 | head -1
echo "built: $WORK/install/fmuCheck.linux64 $WORK/install/fmusim"
