"""The main window and the application around it: entry point, menus and toolbar, files, autosave, dialogs, and guards for the Qt binding."""
