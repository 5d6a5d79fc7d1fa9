"""The Python face of blocksim: load, compile and simulate; building diagrams in Python; notebooks."""
