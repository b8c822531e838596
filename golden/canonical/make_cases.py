#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Test cases for the canonical JSON form and the content hash
(golden/README.md, "Canonical form and content hash").

Each case is a JSON text, its canonical form and its content hash.  The
canonical forms below are written out by hand from the definition and
asserted equal to pflref_golden.canonical(json.loads(text)); the hashes are
hashlib's SHA-256 of them.  Any implementation of the definition (ref/
canonical.c, a candidate's tooling) should reproduce every line.

    /usr/bin/python3 golden/canonical/make_cases.py [OUTDIR]

writes cases.json (format pflref-canonical-cases/1).
"""
import json
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import pflref_golden as pg   # noqa: E402

# (name, JSON text, canonical text written by hand)
CASES = [
    ("keys sorted by bytes, no white space",
     '{ "b": 1, "a": 2, "B": 3, "aa": [], "": null }',
     '{"":null,"B":3,"a":2,"aa":[],"b":1}'),
    ("keys by UTF-8 bytes, not UTF-16 units: U+FF61 before U+1F600",
     '{"\\ud83d\\ude00": 1, "\\uff61": 2, "\\u00e9": 3, "z": 4}',
     '{"z":4,"\\u00e9":3,"\\uff61":2,"\\ud83d\\ude00":1}'),
    ("nested values keep array order",
     '{"x": [3, 1, 2, {"k": true, "j": false}], "w": {}}',
     '{"w":{},"x":[3,1,2,{"j":false,"k":true}]}'),
    ("integers stay integers, in decimal",
     '[0, -0, 12, -7, 9007199254740993]',
     '[0,0,12,-7,9007199254740993]'),
    ("reals with a whole value get .0",
     '[1.0, -2.0, 100.0, 0.0, -0.0, 1e16]',
     '[1.0,-2.0,100.0,0.0,-0.0,10000000000000000.0]'),
    ("reals as %.17g",
     '[0.1, 2.385, 0.5, 0.05, 1e-4, 123456789012345678.0]',
     '[0.10000000000000001,2.3849999999999998,0.5,0.050000000000000003,'
     '0.0001,1.2345678901234568e17]'),
    ("exponents: no '+', no leading zeros",
     '[1e20, 1E-7, 1e-5, 1e17, 5e-324, 1.7976931348623157e308, 2.5e-300]',
     '[1e20,9.9999999999999995e-8,1.0000000000000001e-5,1e17,'
     '4.9406564584124654e-324,1.7976931348623157e308,2.5e-300]'),
    ("string escapes as json.dumps(ensure_ascii=True)",
     '"q\\"b\\\\s/\\n\\t\\r\\b\\f\\u0001\\u001f\\u007f~ \\u00e9\\u20ac\\ud83d\\ude00"',
     '"q\\"b\\\\s/\\n\\t\\r\\b\\f\\u0001\\u001f\\u007f~ \\u00e9\\u20ac\\ud83d\\ude00"'),
    ("raw non-ASCII input is escaped",
     '{"name": "η = 0.05, μ_ft, ½ Σ"}',
     '{"name":"\\u03b7 = 0.05, \\u03bc_ft, \\u00bd \\u03a3"}'),
    ("literals",
     '[true, false, null, "", []]',
     '[true,false,null,"",[]]'),
]


def main():
    out = pg.out_dir(sys.argv, HERE)
    cases = []
    for name, text, want in CASES:
        got = pg.canonical(json.loads(text))
        assert got == want, (name, got, want)
        # the canonical text is itself JSON and canonical
        assert pg.canonical(json.loads(got)) == got, name
        cases.append({"name": name, "text": text, "canonical": want,
                      "hash": pg.content_hash(json.loads(text))})
    doc = {
        "format": "pflref-canonical-cases/1",
        "description": "Canonical JSON text and content hash "
                       "(golden/README.md): for each case, "
                       "canonical(parse(text)) == canonical and "
                       "\"sha256:\" + sha256(canonical) == hash.",
        "generator": "golden/canonical/make_cases.py (canonical forms written "
                     "by hand, asserted against pflref_golden.canonical)",
        "cases": cases,
    }
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print("wrote", len(cases), "canonical cases")


if __name__ == "__main__":
    main()
