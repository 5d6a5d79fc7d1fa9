"""The desktop editor (`blocksim gui`): the only package that imports Qt.

The Qt-free helpers (autolayout, geometry, routing, portinfo, validation) can be used without
PySide6; everything else needs it. Importing this package itself imports nothing from Qt.
"""
