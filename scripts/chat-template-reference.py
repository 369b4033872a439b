#!/usr/bin/env python3
"""Reference chat-template renders for scripts/tokenizer-parity.js: jinja2 in the environment transformers builds
(src/transformers/utils/chat_template_utils.py, `_compile_jinja_template`: ImmutableSandboxedEnvironment with
trim_blocks, lstrip_blocks and loopcontrols; its tojson, raise_exception and strftime_now) and the context
apply_chat_template renders with (messages, tools, documents, add_generation_prompt, the special_tokens_map, **kwargs).
stdin: JSON [{template, config, messages, tools?, add_generation_prompt, variables?}]; stdout: JSON [{text} | {error}]."""
import json
import sys
from datetime import datetime

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

SPECIAL_TOKENS = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]


def token_text(token):
    return token.get("content") if isinstance(token, dict) else token


def special_tokens_map(config):
    out = {name: token_text(config[name]) for name in SPECIAL_TOKENS if token_text(config.get(name)) is not None}
    if isinstance(config.get("additional_special_tokens"), list):
        out["additional_special_tokens"] = [token_text(t) for t in config["additional_special_tokens"]]
    return out


def environment():
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    return env


def render(env, case):
    template = env.from_string(case["template"])
    context = {**special_tokens_map(case["config"]), **case.get("variables", {})}
    return template.render(messages=case["messages"], tools=case.get("tools"), documents=None,
                           add_generation_prompt=case["add_generation_prompt"], **context)


def main():
    env = environment()
    out = []
    for case in json.load(sys.stdin):
        try:
            out.append({"text": render(env, case)})
        except jinja2.exceptions.TemplateError as error:
            out.append({"error": str(error)})
    json.dump(out, sys.stdout)


main()
