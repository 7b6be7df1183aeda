"""REALM retrieval (Algorithm 2): planning, seeding, expansion, aggregation."""
