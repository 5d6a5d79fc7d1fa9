"""The diagram being edited: the document, its undo commands (the only code that changes the model), and the Qt-free checks and value conversions every edit goes through."""
