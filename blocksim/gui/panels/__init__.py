"""The side panels: palette, inspector, diagram settings, diagnostics, and the form pieces they share."""
