"""Linear analysis in the editor (issue 29): `marking` puts linearization inputs, outputs and
loop openings on wires (undoable, saved in the file); `core` calls blocksim's operating point
and linearization, in a worker thread (`background`); `response` computes what is plotted
(Bode, step, poles and zeros, margins; numpy and scipy only) and `plots` draws it;
`linearize_dialog` and `operating_dialog` are Analysis > Linearize and Operating Point,
`export` writes a model's matrices, `menu` opens the dialogs."""
