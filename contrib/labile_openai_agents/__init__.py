"""The OpenAI Agents SDK on a labile memory (``labile[openai-agents]``).

* `labile_openai_agents.tools`: ``memory_tools(memory, namespace=…)``, the
  search / remember / forget function tools;
* `labile_openai_agents.session`: `LabileSession`, an SDK session whose
  user and assistant messages also become labile memory.

Importing this package imports the SDK; the rest of labile never does.
"""

from __future__ import annotations

from labile import MissingDependencyError

try:
    import agents  # noqa: F401
except ImportError as exc:  # say what to install, not which module was missing
    raise MissingDependencyError(
        "labile_openai_agents needs the OpenAI Agents SDK: pip install -e "
        "'.[openai-agents]' (from a labile checkout)") from exc

from labile_openai_agents.session import LabileSession, message_text
from labile_openai_agents.tools import memory_tools

__all__ = ["LabileSession", "memory_tools", "message_text"]
