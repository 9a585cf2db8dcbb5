"""The chat/tool loop shared by LLM-based call sessions (cascade, hybrid): ask the model,
run the tools it calls on the scenario database, feed the results back, until it answers in
words."""

from __future__ import annotations

import json
from typing import TypedDict

from voxeval.benchmarks.tools import ToolRuntime
from voxeval.benchmarks.tools.tool_call import ToolCallRecord
from voxeval.providers.base import LLM, ChatResponse, Message


class _TokenLimit(TypedDict, total=False):
    max_tokens: int


def chat_with_tools(
    llm: LLM,
    messages: list[Message],
    tools: ToolRuntime,
    *,
    max_rounds: int = 8,
    temperature: float = 0.0,
    max_tokens: int | None = None,
) -> tuple[ChatResponse, list[ToolCallRecord]]:
    """Run the loop; ``messages`` is extended in place with the assistant and tool messages.
    After ``max_rounds`` tool rounds the model is asked once more without tools."""
    schemas = tools.tool_schemas() or None
    records: list[ToolCallRecord] = []
    # Passed only when set, so a model is called exactly as before when there is no limit.
    limit: _TokenLimit = {} if max_tokens is None else {"max_tokens": max_tokens}
    for _ in range(max_rounds):
        response = llm.chat(messages, tools=schemas, temperature=temperature, **limit)
        if not response.tool_calls:
            messages.append({"role": "assistant", "content": response.text})
            return response, records
        messages.append(
            {
                "role": "assistant",
                "content": response.text or None,
                "tool_calls": [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {
                            "name": call.name,
                            "arguments": call.raw_arguments or json.dumps(call.arguments),
                        },
                    }
                    for call in response.tool_calls
                ],
            }
        )
        for call in response.tool_calls:
            record = tools.call(call.name, call.raw_arguments or call.arguments)
            records.append(record)
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call.id,
                    "content": json.dumps(record.result, default=str),
                }
            )
    response = llm.chat(messages, temperature=temperature, **limit)
    messages.append({"role": "assistant", "content": response.text})
    return response, records
