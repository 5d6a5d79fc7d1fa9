"""Automatic layout of diagrams without positions: columns, order, feedback rows, wire bends, scoring. Without Qt."""
