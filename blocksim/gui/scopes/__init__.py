"""Running from the editor and showing the results: the runner thread, run control, scopes and plots."""
