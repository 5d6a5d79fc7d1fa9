"""The Sweep dialog (Simulation > Sweep…): `spec` turns its fields into a checked sweep
request (Qt-free, the CLI's rules), `form` holds the fields, `background` runs
blocksim.sweep off the GUI thread with Cancel, `results` shows the table and the metric
plot, `overlay` the signals of picked runs, `dialog` puts them together."""
