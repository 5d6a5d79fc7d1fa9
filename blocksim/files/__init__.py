"""Safe file access: atomic writes, bounded reads."""
