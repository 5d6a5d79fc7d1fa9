"""How a block type is declared (ports, parameters, states, sample times) and the registry of block libraries."""
