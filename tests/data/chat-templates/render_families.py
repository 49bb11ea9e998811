#!/usr/bin/env python3
"""Renders families.json: the chat templates of the newer model families (Qwen3 with its thinking switch, Qwen3-Coder's
XML tool calls, gpt-oss's harmony format) over a few conversations, with Python's Jinja2 as Hugging Face's apply_chat_template sets it up
(sandboxed, trim_blocks, lstrip_blocks, loopcontrols, tojson, raise_exception, strftime_now fixed to 2026-01-15),
as expected.json was made. Run by hand (needs python3-jinja2); the test reads only its output."""
import json
import os

from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))


def raise_exception(message):
    raise TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: __import__("datetime").date(2026, 1, 15).strftime(fmt)
    return env


TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Get the current weather for a city",
                                           "parameters": {"type": "object", "properties": {
                                               "city": {"type": "string", "description": "City name"}},
                                               "required": ["city"]}}}]
BASE = {"bos_token": "<BOS>", "eos_token": "<EOS>", "add_generation_prompt": True}
SYSTEM_USER = [{"role": "system", "content": "You are a concise assistant."},
               {"role": "user", "content": "What is a GPU warp?"}]
TOOL_TURNS = [{"role": "user", "content": "Weather in Tokyo?"},
              {"role": "assistant", "content": "", "tool_calls": [
                  {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Tokyo"}}}]},
              {"role": "tool", "content": "{\"temp_c\": 21}"}]

CASES = {
    "Qwen-Qwen3-0.6B": {
        "system_user": {"messages": SYSTEM_USER},
        "thinking_off": {"messages": SYSTEM_USER, "enable_thinking": False},
        "thinking_on": {"messages": SYSTEM_USER, "enable_thinking": True},
        "multi_turn_reasoning": {"messages": [
            {"role": "user", "content": "2+2?"},
            {"role": "assistant", "content": "<think>\nAdd them.\n</think>\n\n4"},
            {"role": "user", "content": "And 3+3?"},
            {"role": "assistant", "content": "6", "reasoning_content": "Add again."},
            {"role": "user", "content": "Thanks"}]},
        "tools": {"messages": TOOL_TURNS, "tools": TOOLS},
        "reasoning_after_last_query": {"add_generation_prompt": False, "messages": [
            {"role": "user", "content": "2+2?"},
            {"role": "assistant", "content": "4", "reasoning_content": "\nAdd them.\n"}]},
    },
    "Qwen-Qwen3-Coder": {
        "system_user": {"messages": SYSTEM_USER},
        "tools": {"messages": TOOL_TURNS, "tools": TOOLS},
        # Arguments of several types (a string over two lines, a number, an object, a list), content null, two
        # tool results in a row.
        "typed_arguments": {"tools": TOOLS, "messages": [
            {"role": "user", "content": "Save it."},
            {"role": "assistant", "content": None, "tool_calls": [
                {"type": "function", "function": {"name": "write_file", "arguments": {
                    "path": "/tmp/a.txt", "text": "line 1\nline 2", "mode": 420, "meta": {"x": [1, 2]},
                    "tags": ["a", "b"], "ok": True}}},
                {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]},
            {"role": "tool", "content": "saved"},
            {"role": "tool", "content": "{\"temp_c\": 3}"}]},
    },
    "openai-gpt-oss-120b": {
        "system_user": {"messages": SYSTEM_USER},
        "reasoning_low": {"messages": SYSTEM_USER, "reasoning_effort": "low"},
        "multi_turn_thinking": {"messages": [
            {"role": "user", "content": "2+2?"},
            {"role": "assistant", "content": "4", "thinking": "Add them."},
            {"role": "user", "content": "Thanks"}]},
        "tools": {"messages": TOOL_TURNS, "tools": TOOLS},
        "no_generation_prompt": {"messages": SYSTEM_USER, "add_generation_prompt": False},
    },
}


def main():
    env = environment()
    out = {"note": "expected renders from Python Jinja2 (render_families.py: sandboxed, trim_blocks, lstrip_blocks, "
                   "loopcontrols; strftime_now fixed to 2026-01-15; bos_token='<BOS>', eos_token='<EOS>')",
           "cases": []}
    for name, cases in CASES.items():
        with open(os.path.join(HERE, name + ".jinja"), encoding="utf-8") as f:
            template = env.from_string(f.read())
        for case, ctx in cases.items():
            context = dict(BASE, **ctx)
            entry = {"template": name, "case": case, "context": context}
            try:
                entry["expected"] = template.render(**context)
            except TemplateError as e:
                entry["expected_error"] = str(e)
            out["cases"].append(entry)
    with open(os.path.join(HERE, "families.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
