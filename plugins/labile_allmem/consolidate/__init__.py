"""All-Mem offline consolidation, ATC (the paper's Algorithm 1).

Diagnosis (`diagnose`) proposes edits over the neighbourhoods of buffered
units; the gate and Norm (`gate`) filter and canonicalise them; targets are
then handled one by one in the order Split, Merge, Update: applicability
re-check, plan (`plan_offline` / `plan_llm`), deterministic validation
(`validate`) and rule-based execution (`execute`). `atc` ties it together
as the ``allmem.atc`` consolidator.
"""
