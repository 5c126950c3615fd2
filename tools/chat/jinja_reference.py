#!/usr/bin/python3
"""Renders chat templates as transformers' apply_chat_template does, with Debian's python3-jinja2:
the reference tests/js/chat_template.test.cjs compares the library's applyChatTemplate with.

The environment is transformers' (utils/chat_template_utils.py, _compile_jinja_template): an
ImmutableSandboxedEnvironment with trim_blocks and lstrip_blocks, the loopcontrols extension and
the {% generation %} block of AssistantTracker (rendered as its body), tojson as json.dumps with
ensure_ascii=False, and the globals raise_exception and strftime_now. The variables are
apply_chat_template's: messages, tools and documents (None when not given), add_generation_prompt,
then the special tokens and the extra keyword arguments.

Usage: jinja_reference.py CASES.json   (or the cases on stdin)
  CASES.json: [{ "template", "messages", "add_generation_prompt", "bos_token"?, "eos_token"?,
                 "tools"?, "documents"?, "variables"?, "now"? }, ...]
  "now": seconds since the epoch that strftime_now reads (local time), default the real time.
  Prints a JSON list: { "text": ... } or { "error": ... } per case.
"""
import json
import sys
from datetime import datetime

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment


class TemplateError(Exception):
    pass


class AssistantTracker(Extension):
    """transformers' {% generation %} ... {% endgeneration %}: marks the assistant's tokens; the
    text is the body's."""
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_generation_support"), [], [], body).set_lineno(lineno)

    def _generation_support(self, caller):
        return caller()


def environment(now):
    def raise_exception(message):
        raise TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return (datetime.fromtimestamp(now) if now is not None else datetime.now()).strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[AssistantTracker, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def render(case):
    env = environment(case.get("now"))
    template = env.from_string(case["template"])
    special = {k: case[k] for k in ("bos_token", "eos_token") if k in case}
    return template.render(messages=case["messages"], tools=case.get("tools"), documents=case.get("documents"),
                           add_generation_prompt=case.get("add_generation_prompt", False), **special, **case.get("variables", {}))


def main():
    cases = json.load(open(sys.argv[1], encoding="utf-8") if len(sys.argv) > 1 else sys.stdin)
    out = []
    for case in cases:
        try:
            out.append({"text": render(case)})
        except (TemplateError, jinja2.TemplateError) as e:
            out.append({"error": f"{type(e).__name__}: {e}"})
    json.dump(out, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
