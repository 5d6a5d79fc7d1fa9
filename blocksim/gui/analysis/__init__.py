"""Linear analysis in the editor (issue 29): `marking` puts linearization inputs, outputs and
loop openings on wires (undoable, saved in the file), `core` calls blocksim's operating point
and linearization off the GUI thread, `response` computes what the Linearize dialog plots
(Bode, step, poles and zeros, margins; numpy and scipy only), `linearize_dialog` and
`operating_dialog` show them, `menu` builds the Analysis menu."""
