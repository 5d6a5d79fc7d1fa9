"""The desktop editor (`blocksim gui`): the only package that imports Qt.

Its parts, one subpackage each: `document` (the diagram being edited and its undo
commands), `canvas` (scene, items, gestures, wire routing), `layout` (automatic layout),
`panels` (palette, inspector, settings, diagnostics), `scopes` (running from the editor
and plotting), `window` (main window, menus, files, autosave, the app). The Qt-free helpers
(layout, canvas.geometry, canvas.routing, canvas.portinfo, document.validation) can be used
without PySide6. Importing this package itself imports nothing from Qt.
"""
