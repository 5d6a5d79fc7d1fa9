"""Physical components: ports that are physical connections (across and through variables),
equations instead of code, and the compiler passes that turn a network of them into one
block of generated code (alias elimination, index reduction, sorting, solving).

`declare` is how a component type is written; `network` gathers the components of a flat
diagram into networks; `equations` parses their equations (the safe expression language)
into sympy; `structure` holds the passes; `netblock` is the block a network becomes.
See docs/physical.md.
"""
