#!/usr/bin/env python3
"""Speculative decoding workloads against an OpenAI-compatible server (met
serve or llama.cpp's llama-server), timed from the client: batch-1 decode
tok/s and, where the server reports them, accepted and rejected prediction
tokens. A manual tool (needs a running server); CI never runs it.

  bench/peer/spec_workloads.py --port 8080 [--tokens 1000] [--prompt TEXT]
                               [--repeats 2] [--skip-prediction]

Workloads, each a greedy /v1/completions request of --tokens tokens with
ignore_eos (the model's own text stands in for a document, so a random-weight
model works):
  plain       no prediction: the baseline, and the text the others reuse;
  predicted   prediction = that text (OpenAI's Predicted Outputs);
  edited      prediction = that text with three small edits, at 1/4, 1/2 and
              3/4 of it (what "rewrite this file with three changes" sends);
  quoted      (--quoted) no prediction; the prompt is the prompt, that text
              and the prompt again, so a model whose next token follows its
              last ones (make-model --branch-scale) quotes its prompt: the
              workload prompt lookup is for.
A server started with prompt lookup (met --spec-lookup N, llama.cpp's
--spec-type ngram-*) speeds up `plain` itself; run the script against it
and without it. tok/s = completion tokens / request wall time (prefill
included: the prompt is a few tokens). Prints one line per workload and a
JSON object last.
"""
import argparse
import json
import time
import urllib.request


def complete(port, body):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    t0 = time.monotonic()
    with urllib.request.urlopen(req, timeout=3600) as r:
        out = json.loads(r.read())
    return out, time.monotonic() - t0


def edit(text):
    """Three small edits: a few characters replaced at 1/4, 1/2 and 3/4."""
    out = text
    for frac, new in ((0.75, " green "), (0.5, " and then "), (0.25, " quickly ")):
        at = int(len(out) * frac)
        out = out[:at] + new + out[at + 8:]
    return out


def run(port, body, repeats):
    best = None
    for _ in range(repeats):
        out, wall = complete(port, body)
        if best is None or wall < best[1]:
            best = (out, wall)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--tokens", type=int, default=1000)
    ap.add_argument("--prompt", default="Once upon a time")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--skip-prediction", action="store_true", help="the server ignores `prediction` (llama.cpp)")
    ap.add_argument("--quoted", action="store_true", help="also the quoted workload")
    a = ap.parse_args()
    base = {"prompt": a.prompt, "max_tokens": a.tokens, "temperature": 0, "ignore_eos": True}
    results = {}
    plain, wall = run(a.port, base, a.repeats)
    text = plain["choices"][0]["text"]
    n = plain["usage"]["completion_tokens"]
    results["plain"] = {"tokens": n, "seconds": wall, "tok_s": n / wall}
    workloads = [] if a.skip_prediction else [("predicted", text), ("edited", edit(text))]
    for name, prediction in workloads:
        out, wall = run(a.port, dict(base, prediction={"type": "content", "content": prediction}), a.repeats)
        u = out["usage"]
        details = u.get("completion_tokens_details") or {}
        results[name] = {"tokens": u["completion_tokens"], "seconds": wall, "tok_s": u["completion_tokens"] / wall,
                         "same_text": out["choices"][0]["text"] == text,
                         "accepted": details.get("accepted_prediction_tokens"),
                         "rejected": details.get("rejected_prediction_tokens")}
    if a.quoted:
        out, wall = run(a.port, dict(base, prompt=a.prompt + text + "\n\n" + a.prompt), a.repeats)
        n = out["usage"]["completion_tokens"]
        quoted = out["choices"][0]["text"]
        same = sum(1 for x, y in zip(quoted, text) if x == y) / max(1, len(text))
        results["quoted"] = {"tokens": n, "seconds": wall, "tok_s": n / wall, "quoted_share": same}
    for name, r in results.items():
        if name == "quoted":
            print(f"{name:10s} {r['tokens']:5d} tokens in {r['seconds']:7.2f} s  {r['tok_s']:7.1f} tok/s"
                  f"  {100 * r['quoted_share']:.0f}% of its characters quote the plain text")
            continue
        extra = "" if name == "plain" else \
            f"  accepted {r['accepted']} rejected {r['rejected']} same text {r['same_text']}"
        print(f"{name:10s} {r['tokens']:5d} tokens in {r['seconds']:7.2f} s  {r['tok_s']:7.1f} tok/s{extra}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
