"""Format names: ``FORMATS`` (in detection order), their ``ALIASES``, and ``EXPECTED``, the
list of what reads as a trace that errors quote. ``norm_format`` resolves a user's name."""

from __future__ import annotations

from ...errors import TraceFormatError

# every format, in the order of the package docstring's table
FORMATS: tuple[str, ...] = (
    "trajcheck", "tau_bench", "tau2", "bfcl", "inspect_ai", "atif", "langfuse", "openai_agents", "anthropic_managed",
    "mlflow", "pydantic_ai", "smolagents", "autogen", "langchain_events", "litellm", "bedrock_invocations", "llamaindex_events", "crewai_events", "ag2_chats", "otel", "langsmith", "promptfoo", "vertex", "openai_responses",
    "deepeval", "langchain", "ragas", "messages", "anthropic", "openai_chat", "plain",
)
# other names a user may give for a format (``--format``)
ALIASES: dict[str, str] = {"openai": "openai_chat", "chat": "openai_chat", "responses": "openai_responses",
                           "adk": "vertex", "openinference": "otel", "otlp": "otel", "tau-bench": "tau_bench",
                           "tau": "tau_bench", "native": "trajcheck", "inspect": "inspect_ai", "agents": "openai_agents",
                           "openai-agents": "openai_agents", "managed_agents": "anthropic_managed",
                           "tau2-bench": "tau2", "pydantic-ai": "pydantic_ai",
                           "autogen-agentchat": "autogen", "agentchat": "autogen", "astream_events": "langchain_events",
                           "bedrock": "messages", "gemini": "messages", "google_genai": "messages", "cohere": "messages",
                           "mistral": "messages", "haystack": "messages", "llamaindex": "messages",
                           "semantic_kernel": "messages", "strands": "messages", "ag2": "messages",
                           "crewai": "crewai_events", "bedrock_invocation_logs": "bedrock_invocations",
                           "invocation_logs": "bedrock_invocations", "ag2-chats": "ag2_chats", "chat_results": "ag2_chats"}
EXPECTED = ("a trace: a trajcheck trajectory, tau-bench records, a tau2-bench results file, an Inspect AI log, an ATIF trajectory, a Langfuse "
            "export, OpenAI Agents SDK spans, Anthropic Managed Agents events, MLflow traces, pydantic-ai messages, smolagents runs, AutoGen AgentChat results, events and state, LangChain astream_events, LiteLLM logging payloads, Bedrock model-invocation logs, LlamaIndex workflow events, CrewAI event logs, AG2 ChatResults and chat_id messages, OTLP JSON, LangSmith runs, promptfoo "
            "output, Vertex/ADK trajectories, OpenAI Responses items, DeepEval tool calls, LangChain/RAGAS/"
            "Anthropic/OpenAI chat messages, Bedrock/Gemini/Cohere/Mistral/Haystack/LlamaIndex/Semantic Kernel/AG2 "
            "messages, or a list of {name, args} calls")


def norm_format(fmt: str) -> str:
    """The format name ``fmt`` stands for (an alias resolved; ``"auto"`` kept).

    Raises ``TraceFormatError`` naming the known formats when ``fmt`` is none of them.
    """
    f = ALIASES.get(fmt, fmt)
    if f != "auto" and f not in FORMATS:
        raise TraceFormatError(f"unknown trace format {fmt!r}; known: auto, {', '.join(FORMATS)}")
    return f
