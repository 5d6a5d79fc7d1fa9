"""The hostile corpus's cases by category (`hostile.corpus` joins them)."""
