"""Every LLM prompt of the REALM bundle, with the JSON schema its reply must satisfy.

The prompts are written for this project (none is copied from the paper).
Each asks for one strict JSON value; schemas use the subset that
`labile_llm.jsoncheck` validates. Nodes and edges are shown under short integer
ids (see `labile_realm.ids.IdMap`); a reply that names any other id is
rejected by the caller. One module per concern:

* `common`: the system message, schema building blocks, node lines;
* `extract`: the units of new turns and the running summary (one turn, or a
  batch of turns of one session);
* `decide`: add / modify / skip of a unit, and the edges of its node;
* `retrieve`: seed plans, the sufficiency controller, expansion actions;
* `reconsolidate`: the audit of a recalled subgraph.

Callers import this package (``from labile_realm import prompts``) and use the
names below.
"""

from __future__ import annotations

from labile_realm.prompts.common import SYSTEM, TIME_PATTERN, node_line, schema_text
from labile_realm.prompts.decide import (
    EDGE_SCHEMA,
    NODE_SCHEMA,
    edge_decision_prompt,
    edge_schema,
    node_decision_prompt,
    node_schema,
)
from labile_realm.prompts.extract import (
    EXTRACT_SCHEMA,
    extraction_batch_prompt,
    extraction_batch_schema,
    extraction_prompt,
)
from labile_realm.prompts.reconsolidate import TOPOLOGY_SCHEMA, topology_prompt
from labile_realm.prompts.retrieve import (
    EXPANSION_SCHEMA,
    SUFFICIENCY_SCHEMA,
    expansion_prompt,
    expansion_schema,
    seed_plan_prompt,
    seed_schema,
    sufficiency_prompt,
    sufficiency_schema,
)

__all__ = [
    "EDGE_SCHEMA",
    "EXPANSION_SCHEMA",
    "EXTRACT_SCHEMA",
    "NODE_SCHEMA",
    "SUFFICIENCY_SCHEMA",
    "SYSTEM",
    "TIME_PATTERN",
    "TOPOLOGY_SCHEMA",
    "edge_decision_prompt",
    "edge_schema",
    "expansion_prompt",
    "expansion_schema",
    "extraction_batch_prompt",
    "extraction_batch_schema",
    "extraction_prompt",
    "node_decision_prompt",
    "node_line",
    "node_schema",
    "schema_text",
    "seed_plan_prompt",
    "seed_schema",
    "sufficiency_prompt",
    "sufficiency_schema",
    "topology_prompt",
]
