"""The `blocksim` command line."""
