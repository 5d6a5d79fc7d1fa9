"""The diagram and its file: the plain model, the JSON format and its schema check, the shipped examples."""
