"""REALM construction (Algorithm 1): units, neighbourhoods, node and edge decisions."""
