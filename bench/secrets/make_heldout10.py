# ruff: noqa
#!/usr/bin/env python3
"""Generator for the held-out secret-redaction test set number 10 (corpus + benign).

How this was written (blind):
  * Written without reading the filter or its tests: nothing under gitvault/ or
    tests/, no bench/secrets/make_*.py, no corpus*/benign* files and no
    bench/secrets/README.md were opened.
  * The only things read from the project were: the first 3 lines of
    bench/secrets/corpus_heldout9.jsonl and benign_heldout9.jsonl (to copy the
    JSONL record format), and the list of `kind` values of
    corpus_heldout8.jsonl / corpus_heldout9.jsonl (so every kind here is new).
  * The filter and gitvault were never run on this output.
  * Token formats follow what vendors document publicly (prefixes, lengths,
    CRC32/base62 checksums for GitHub/npm style tokens, base58check for WIF,
    bech32 for age/nostr keys, HMAC-signed JWTs).  Every value is produced by a
    seeded random generator; none of them opens anything.

Output (written next to this script):
  corpus_heldout10.jsonl  {"kind", "text", "secret", "shape"[, "parts"]}
  benign_heldout10.jsonl  {"source": "heldout10:<class>", "text"}

Standard library only; deterministic (one seeded random.Random).
"""

import base64
import hashlib
import hmac
import json
import os
import random
import re
import string
import sys
import urllib.parse
import uuid
import zlib

R = random.Random(1010_2025)
HERE = os.path.dirname(os.path.abspath(__file__))

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DIG = string.digits
ALNUM = UP + LO + DIG
B64U = ALNUM + "-_"
HEXL = "0123456789abcdef"
B62 = DIG + UP + LO


# --------------------------------------------------------------------------
# small random helpers
# --------------------------------------------------------------------------
def rs(n, alphabet=ALNUM):
    return "".join(R.choice(alphabet) for _ in range(n))


def rbytes(n):
    return bytes(R.getrandbits(8) for _ in range(n))


def hx(n):
    return rs(n, HEXL)


def b64(nbytes):
    return base64.b64encode(rbytes(nbytes)).decode()


def b64u(nbytes):
    return base64.urlsafe_b64encode(rbytes(nbytes)).decode().rstrip("=")


def ruuid():
    return str(uuid.UUID(int=R.getrandbits(128), version=4))


def base62(num, width):
    out = ""
    while num:
        num, r = divmod(num, 62)
        out = B62[r] + out
    return out.rjust(width, "0")


def crc_token(prefix, body_len=30):
    """GitHub / npm style: prefix + random body + base62(crc32(body)) (6 chars)."""
    body = rs(body_len)
    return prefix + body + base62(zlib.crc32(body.encode()), 6)


B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def b58check(payload):
    data = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    num = int.from_bytes(data, "big")
    out = ""
    while num:
        num, r = divmod(num, 58)
        out = B58[r] + out
    pad = len(data) - len(data.lstrip(b"\0"))
    return "1" * pad + out


def b58(nbytes):
    num = int.from_bytes(rbytes(nbytes), "big")
    out = ""
    while num:
        num, r = divmod(num, 58)
        out = B58[r] + out
    return out


BECH = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def _polymod(values):
    gen = [0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3]
    chk = 1
    for v in values:
        b = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if ((b >> i) & 1) else 0
    return chk


def bech32(hrp, data8):
    acc = bits = 0
    data5 = []
    for b in data8:
        acc = (acc << 8) | b
        bits += 8
        while bits >= 5:
            bits -= 5
            data5.append((acc >> bits) & 31)
    if bits:
        data5.append((acc << (5 - bits)) & 31)
    hrp_exp = [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]
    pm = _polymod(hrp_exp + data5 + [0] * 6) ^ 1
    chk = [(pm >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(BECH[d] for d in data5 + chk)


def jwt(payload, header=None):
    header = header or {"alg": "HS256", "typ": "JWT"}
    enc = lambda o: (
        base64.urlsafe_b64encode(json.dumps(o, separators=(",", ":")).encode()).decode().rstrip("=")
    )
    signing = enc(header) + "." + enc(payload)
    sig = hmac.new(rbytes(32), signing.encode(), hashlib.sha256).digest()
    return signing + "." + base64.urlsafe_b64encode(sig).decode().rstrip("=")


WORDS = (
    "amber anchor apple arrow atlas autumn badger bamboo basil beacon birch bison bramble breeze "
    "cactus canyon carbon cedar cherry cinder citrus clover cobalt comet copper coral cosmic "
    "cricket crystal dahlia delta desert dolphin dragon dune eagle ember falcon fennel fern fjord "
    "forest fossil garnet geyser ginger glacier granite harbor hazel heron hollow indigo iris ivory "
    "jasmine juniper kestrel lagoon lantern lemon lilac lotus lunar magnet mango maple marble meadow "
    "meteor mint monsoon mosaic nectar nimbus nova oak oasis olive onyx orbit orchid otter pebble "
    "pepper pine planet plum prairie quartz quill raven reef river saffron sage salmon sapphire "
    "sequoia shadow sierra silver spruce squirrel summit tango thistle thunder tiger topaz tulip "
    "tundra velvet violet walnut willow winter yarrow zephyr"
).split()
BIP39ISH = (
    "abandon ability absorb abstract access acoustic actress adapt advice aerobic afford "
    "agent alcohol alley amateur ancient anger animal ankle announce antenna anxiety apology "
    "arctic arena armor artefact aspect asthma atom auction august avocado awake axis "
    "bachelor balcony banana barrel basket battle beauty believe bench betray bicycle "
    "blanket blossom border bottom bracket brave bridge brisk broccoli bubble buddy burger "
    "cabin cactus canal candy canvas capable carbon cargo casino castle catalog cereal chalk "
    "chimney chronic circle citizen clarify clever cluster coconut column common coyote "
    "cradle crater cruise cupboard custom cycle damp dawn debris decade defense dentist "
    "desert detail diagram dinosaur display dolphin donkey dragon drastic dutch dwarf "
    "eager eclipse effort elbow elegant embark emerge engine enrich envelope episode "
    "erosion essay evolve exotic fabric faculty famous fancy fatigue feature festival "
    "fiction filter fitness flavor fluid foam fossil fragile frequent frozen fury gadget "
    "galaxy garlic gauge genius giraffe glimpse glove gorilla gospel gravity guitar"
).split()
SYM = "!-_.*^~+"


def pw():
    """A realistic-looking human or generated password (no quotes, spaces, #, $, @, %)."""
    style = R.randrange(6)
    if style == 0:
        return (
            R.choice(WORDS).capitalize()
            + R.choice("-_.!")
            + R.choice(WORDS).capitalize()
            + str(R.randrange(10, 99))
            + R.choice("!*^~")
        )
    if style == 1:
        return rs(1, ALNUM) + rs(R.randrange(12, 20), ALNUM + SYM) + rs(1, ALNUM)
    if style == 2:
        w = R.choice(WORDS)
        leet = w.replace("a", "4").replace("e", "3").replace("o", "0").replace("i", "1")
        return leet.capitalize() + R.choice(SYM) + str(R.randrange(1000, 9999)) + rs(3, UP)
    if style == 3:
        return rs(R.randrange(20, 28), ALNUM)
    if style == 4:
        return "-".join(R.choice(WORDS) for _ in range(4)) + str(R.randrange(10, 99))
    return (
        rs(4, UP)
        + R.choice(SYM)
        + rs(5, LO)
        + str(R.randrange(100, 999))
        + R.choice(SYM)
        + rs(3, ALNUM)
    )


def pwx():
    """Password with URL/XML-hostile characters (for encoding tests)."""
    return (
        rs(5, ALNUM)
        + R.choice("@#%&")
        + rs(4, ALNUM)
        + R.choice("/:?+")
        + rs(4, ALNUM)
        + R.choice("@&<>")
        + rs(3, ALNUM)
    )


# --------------------------------------------------------------------------
# vendor token generators (formats as publicly documented / observed)
# --------------------------------------------------------------------------
def aws_akid(prefix="AKIA"):
    return prefix + rs(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")


def aws_secret():
    return rs(40, ALNUM + "+/")


def slack_bot():
    return "xoxb-%d-%d-%s" % (R.randrange(10**10, 10**12), R.randrange(10**12, 10**13), rs(24))


def slack_user():
    return "xoxp-%d-%d-%d-%s" % (
        R.randrange(10**10, 10**12),
        R.randrange(10**10, 10**12),
        R.randrange(10**12, 10**13),
        hx(32),
    )


def stripe_sk(mode="live"):
    return "sk_%s_51%s%s" % (mode, rs(14, ALNUM), rs(85, ALNUM))


def sentry_org_token():
    claims = {
        "iat": R.randrange(1700000000, 1760000000),
        "url": "https://sentry.io",
        "region_url": "https://us.sentry.io",
        "org": R.choice(["acme", "northwind", "globex", "initech"]),
    }
    return (
        "sntrys_"
        + base64.b64encode(json.dumps(claims, separators=(",", ":")).encode()).decode().rstrip("=")
        + "_"
        + rs(43, ALNUM + "+/")
    )


def grafana_sa():
    body = rs(32)
    return "glsa_" + body + "_" + "%08x" % zlib.crc32(body.encode())


def grafana_cloud():
    claims = {
        "o": str(R.randrange(100000, 999999)),
        "n": "stack-%d-hm-read-%s"
        % (R.randrange(100000, 999999), R.choice(["deploy", "ci", "agent"])),
        "k": rs(24),
        "m": {"r": R.choice(["prod-us-central-0", "prod-eu-west-2"])},
    }
    return "glc_" + base64.b64encode(json.dumps(claims, separators=(",", ":")).encode()).decode()


def discord_bot():
    uid = str(R.randrange(10**17, 10**18 + 2 * 10**17))
    return (
        base64.b64encode(uid.encode()).decode().rstrip("=") + "." + rs(6, B64U) + "." + rs(38, B64U)
    )


def wif():
    return b58check(b"\x80" + rbytes(32) + b"\x01")


def age_key():
    return bech32("age-secret-key-", rbytes(32)).upper()


def pypi_token():
    mac = (
        b"\x02\x01\x08pypi.org\x02\x24"
        + ruuid().encode()
        + b"\x00\x02\x2b"
        + b'[1,["project-ids"]]'
        + b"\x00\x00\x06 "
        + rbytes(32)
    )
    return "pypi-" + base64.urlsafe_b64encode(mac).decode().rstrip("=")


def mapbox_sk():
    claims = {"u": R.choice(["acme-maps", "routeplanner", "fleetview"]), "a": rs(25, LO + DIG)}
    return (
        "sk."
        + base64.urlsafe_b64encode(json.dumps(claims, separators=(",", ":")).encode())
        .decode()
        .rstrip("=")
        + "."
        + rs(22, B64U)
    )


def mapbox_pk():
    claims = {"u": R.choice(["acme-maps", "routeplanner", "fleetview"]), "a": rs(25, LO + DIG)}
    return (
        "pk."
        + base64.urlsafe_b64encode(json.dumps(claims, separators=(",", ":")).encode())
        .decode()
        .rstrip("=")
        + "."
        + rs(22, B64U)
    )


def clerk_pk():
    host = (
        R.choice(["clerk.acme.dev", "clerk.fleetview.io", "exotic-lamb-42.clerk.accounts.dev"])
        + "$"
    )
    return R.choice(["pk_live_", "pk_test_"]) + base64.b64encode(host.encode()).decode().rstrip("=")


def op_service_account():
    claims = {
        "signInAddress": "my.1password.com",
        "userAuth": {
            "method": "SRPg-4096",
            "alg": "PBES2g-HS256",
            "iterations": 650000,
            "salt": b64u(16),
        },
        "email": "%s@%s.1passwordserviceaccounts.com" % (rs(12, LO), rs(12, LO + DIG)),
        "srpX": hx(64),
        "muk": {
            "alg": "A256GCM",
            "ext": True,
            "k": b64u(32),
            "key_ops": ["encrypt", "decrypt"],
            "kty": "oct",
            "kid": "mp",
        },
        "secretKey": "A3-"
        + rs(6, UP + DIG)
        + "-"
        + rs(11, UP + DIG)
        + "-"
        + rs(5, UP + DIG)
        + "-"
        + rs(5, UP + DIG)
        + "-"
        + rs(5, UP + DIG),
        "throttleSecret": {"seed": hx(64), "uuid": rs(26, UP + DIG)},
        "deviceUuid": rs(26, LO + DIG),
    }
    return "ops_" + base64.b64encode(
        json.dumps(claims, separators=(",", ":")).encode()
    ).decode().rstrip("=")


GEN = {
    # generic shapes
    "pw": lambda a: pw(),
    "pwx": lambda a: pwx(),
    "phrase": lambda a: " ".join(R.choice(WORDS) for _ in range(int(a or 5))),
    "pin": lambda a: rs(int(a or 6), DIG),
    "hex": lambda a: hx(int(a)),
    "HEX": lambda a: hx(int(a)).upper(),
    "an": lambda a: rs(int(a)),
    "lo": lambda a: rs(int(a), LO + DIG),
    "up": lambda a: rs(int(a), UP + DIG),
    "b64": lambda a: b64(int(a)),
    "b64u": lambda a: b64u(int(a)),
    "dig": lambda a: rs(int(a), DIG),
    "uuid": lambda a: ruuid(),
    "words": lambda a: " ".join(R.choice(BIP39ISH) for _ in range(int(a or 12))),
    # vendors
    "ghp": lambda a: crc_token("ghp_"),
    "gho": lambda a: crc_token("gho_"),
    "ghu": lambda a: crc_token("ghu_"),
    "ghs": lambda a: crc_token("ghs_"),
    "ghr": lambda a: crc_token("ghr_"),
    "ghfg": lambda a: "github_pat_11" + rs(20, UP + DIG) + "_" + rs(59),
    "npm": lambda a: crc_token("npm_"),
    "glpat": lambda a: "glpat-" + rs(20, B64U),
    "gldt": lambda a: "gldt-" + rs(20, B64U),
    "glrt": lambda a: "glrt-" + rs(20, B64U),
    "glptt": lambda a: "glptt-" + hx(40),
    "glft": lambda a: "glft-" + rs(20, B64U),
    "gloas": lambda a: "gloas-" + hx(64),
    "pypi": lambda a: pypi_token(),
    "xoxb": lambda a: slack_bot(),
    "xoxp": lambda a: slack_user(),
    "xapp": lambda a: "xapp-1-A%s-%d-%s" % (rs(10, UP + DIG), R.randrange(10**12, 10**13), hx(64)),
    "slackhook": lambda a: (
        "https://hooks.slack.com/services/T%s/B%s/%s" % (rs(8, UP + DIG), rs(10, UP + DIG), rs(24))
    ),
    "sk_live": lambda a: stripe_sk("live"),
    "rk_live": lambda a: "rk_live_51" + rs(97),
    "whsec": lambda a: "whsec_" + rs(32),
    "akia": lambda a: aws_akid("AKIA"),
    "asia": lambda a: aws_akid("ASIA"),
    "awssec": lambda a: aws_secret(),
    "aiza": lambda a: "AIza" + rs(35, B64U),
    "gocspx": lambda a: "GOCSPX-" + rs(28, B64U),
    "ya29": lambda a: "ya29.a0" + rs(150, B64U),
    "g1": lambda a: "1//0" + rs(99, B64U),
    "openai": lambda a: "sk-proj-" + rs(74, B64U) + "T3BlbkFJ" + rs(74, B64U),
    "openai_svc": lambda a: "sk-svcacct-" + rs(74, B64U) + "T3BlbkFJ" + rs(74, B64U),
    "anthropic": lambda a: "sk-ant-api03-" + rs(93, B64U) + "AA",
    "ant_admin": lambda a: "sk-ant-admin01-" + rs(93, B64U) + "AA",
    "hf": lambda a: "hf_" + rs(34, UP + LO),
    "sendgrid": lambda a: "SG." + rs(22, B64U) + "." + rs(43, B64U),
    "mailgun": lambda a: "key-" + hx(32),
    "shpat": lambda a: "shpat_" + hx(32),
    "shpss": lambda a: "shpss_" + hx(32),
    "shpca": lambda a: "shpca_" + hx(32),
    "atatt": lambda a: "ATATT3xFfGF0" + rs(170, B64U) + "=" + hx(8).upper(),
    "dop": lambda a: "dop_v1_" + hx(64),
    "dapi": lambda a: "dapi" + hx(32),
    "doppler": lambda a: "dp.st.prd." + rs(43),
    "hvs": lambda a: (
        "hvs." + rs(24)
        if a == "short"
        else "hvs.CAESI" + rs(40, B64U) + "Gh4KHGh2cy4" + rs(24) + "EAE"
    ),
    "tfc": lambda a: rs(14) + ".atlasv1." + rs(67),
    "pulumi": lambda a: "pul-" + hx(40),
    "linear": lambda a: "lin_api_" + rs(40),
    "ntn": lambda a: "ntn_" + rs(11, DIG) + rs(35),
    "discord": lambda a: discord_bot(),
    "discordhook": lambda a: (
        "https://discord.com/api/webhooks/%d/%s" % (R.randrange(10**17, 10**18), rs(68, B64U))
    ),
    "telegram": lambda a: "%d:AA%s" % (R.randrange(10**9, 8 * 10**9), rs(33, B64U)),
    "square": lambda a: "EAAA" + rs(60, B64U),
    "sq0csp": lambda a: "sq0csp-" + rs(43, B64U),
    "pscale": lambda a: "pscale_pw_" + rs(43, B64U),
    "pscale_tkn": lambda a: "pscale_tkn_" + rs(43, B64U),
    "sbp": lambda a: "sbp_" + hx(40),
    "sb_secret": lambda a: "sb_secret_" + rs(22, B64U) + "_" + rs(8),
    "sntrys": lambda a: sentry_org_token(),
    "sntryu": lambda a: "sntryu_" + hx(64),
    "glsa": lambda a: grafana_sa(),
    "glc": lambda a: grafana_cloud(),
    "nrak": lambda a: "NRAK-" + rs(27, UP + DIG),
    "heroku": lambda a: "HRKU-AA" + rs(58, B64U),
    "pmak": lambda a: "PMAK-" + hx(24) + "-" + hx(34),
    "figd": lambda a: "figd_" + rs(40, B64U),
    "age": lambda a: age_key(),
    "wif": lambda a: wif(),
    "nsec": lambda a: bech32("nsec", rbytes(32)),
    "mapbox_sk": lambda a: mapbox_sk(),
    "azq": lambda a: rs(3, ALNUM) + "8Q~" + rs(34, ALNUM + "~._-"),
    "cfpat": lambda a: "CFPAT-" + rs(43, B64U),
    "dt0c01": lambda a: "dt0c01." + rs(24, UP + DIG) + "." + rs(64, UP + DIG),
    "rdme": lambda a: "rdme_" + rs(70, LO + DIG),
    "nfp": lambda a: "nfp_" + rs(36),
    "rnd": lambda a: "rnd_" + rs(32),
    "r8": lambda a: "r8_" + rs(37),
    "gsk": lambda a: "gsk_" + rs(52),
    "pplx": lambda a: "pplx-" + rs(48),
    "xai": lambda a: "xai-" + rs(80),
    "openrouter": lambda a: "sk-or-v1-" + hx(64),
    "tskey_auth": lambda a: "tskey-auth-k" + rs(10) + "CNTRL-" + rs(33),
    "tskey_api": lambda a: "tskey-api-k" + rs(10) + "CNTRL-" + rs(33),
    "clerk_sk": lambda a: "sk_live_" + rs(42),
    "resend": lambda a: "re_" + rs(8) + "_" + rs(24),
    "mailchimp": lambda a: hx(32) + "-us" + str(R.randrange(2, 21)),
    "squ": lambda a: "squ_" + hx(40),
    "sqp": lambda a: "sqp_" + hx(40),
    "dckr": lambda a: "dckr_pat_" + rs(27, B64U),
    "akcp": lambda a: "AKCp8" + rs(68),
    "shippo": lambda a: "shippo_live_" + hx(40),
    "ezak": lambda a: "EZAK" + hx(54),
    "paystack": lambda a: "sk_live_" + hx(40),
    "flw": lambda a: "FLWSECK-" + hx(32) + "-X",
    "lsv2": lambda a: "lsv2_pt_" + hx(32) + "_" + hx(10),
    "pcsk": lambda a: "pcsk_" + rs(5) + "_" + rs(63),
    "bkua": lambda a: "bkua_" + hx(40),
    "ccipat": lambda a: "CCIPAT_" + rs(22) + "_" + hx(40),
    "pnu": lambda a: "pnu_" + rs(36),
    "airtable": lambda a: "pat" + rs(14) + "." + hx(64),
    "clickup": lambda a: "pk_%d_%s" % (R.randrange(10**7, 10**9), rs(32, UP + DIG)),
    "asana": lambda a: (
        "2/%d/%d:%s" % (R.randrange(10**15, 10**16), R.randrange(10**15, 10**16), hx(32))
    ),
    "trello": lambda a: "ATTA" + hx(64) + hx(8).upper(),
    "dropbox": lambda a: "sl.B" + rs(135, B64U),
    "typeform": lambda a: "tfp_" + rs(44) + "_" + rs(14),
    "fcm": lambda a: "AAAA" + rs(7, B64U) + ":APA91b" + rs(134, B64U),
    "fb": lambda a: "EAAG" + rs(180),
    "twbearer": lambda a: "AAAAAAAAAAAAAAAAAAAAA" + rs(25) + "%3D" + rs(50),
    "sfdc": lambda a: "00D" + rs(12) + "!" + rs(95, ALNUM + "._"),
    "vk": lambda a: "vk1.a." + rs(170, B64U),
    "yandex_iam": lambda a: "t1.9euelZ" + rs(150, B64U),
    "yandex_api": lambda a: "AQVN" + rs(36, B64U),
    "akab": lambda a: "akab-" + rs(16, LO + DIG) + "-" + rs(16, LO + DIG),
    "braintree": lambda a: "access_token$production$" + rs(16, LO + DIG) + "$" + hx(32),
    "adyen": lambda a: (
        "AQE"
        + rs(12)
        + "+"
        + rs(60, ALNUM + "+/")
        + "==-"
        + rs(43, ALNUM + "+/")
        + "=-"
        + rs(16, ALNUM)
    ),
    "mollie": lambda a: "live_" + rs(30),
    "gocardless": lambda a: "live_" + rs(40, B64U),
    "fly": lambda a: "FlyV1 fm2_lJPE" + rs(300, ALNUM + "+/") + "==",
    "cforigin": lambda a: "v1.0-" + hx(24) + "-" + hx(146),
    "nuget": lambda a: "oy2" + rs(43, LO + DIG),
    "rubygems": lambda a: "rubygems_" + hx(48),
    "cratesio": lambda a: "cio" + rs(32),
    "infracost": lambda a: "ico-" + rs(32),
    "duffel": lambda a: "duffel_live_" + rs(43, B64U),
    "mlsn": lambda a: "mlsn." + hx(64),
    "harness": lambda a: "pat." + rs(22, B64U) + "." + hx(24) + "." + rs(20),
    "scalingo": lambda a: "tk-us-" + rs(48, B64U),
    "octopus": lambda a: "API-" + rs(26, UP + DIG),
    "sgp": lambda a: "sgp_" + hx(16) + "_" + hx(40),
    "ops": lambda a: op_service_account(),
    "jwt": lambda a: jwt(
        {
            "sub": ruuid(),
            "iss": "https://auth.%s.example" % R.choice(["acme", "globex"]),
            "iat": 1731000000 + R.randrange(10**6),
            "exp": 1741000000 + R.randrange(10**6),
            "scope": "read write",
        }
    ),
    "sb_jwt": lambda a: jwt(
        {
            "iss": "supabase",
            "ref": rs(20, LO),
            "role": "service_role",
            "iat": 1718000000 + R.randrange(10**6),
            "exp": 2033000000 + R.randrange(10**6),
        }
    ),
    "k8s_jwt": lambda a: jwt(
        {
            "iss": "kubernetes/serviceaccount",
            "kubernetes.io/serviceaccount/namespace": "ci",
            "kubernetes.io/serviceaccount/secret.name": "deployer-token-" + rs(5, LO + DIG),
            "kubernetes.io/serviceaccount/service-account.name": "deployer",
            "sub": "system:serviceaccount:ci:deployer",
        },
        {"alg": "RS256", "kid": rs(43, B64U)},
    ),
    "eth": lambda a: "0x" + hx(64),
    "tiddly": lambda a: rs(32),
    "alibaba_id": lambda a: "LTAI5t" + rs(18),
    "tencent_id": lambda a: "AKID" + rs(32),
    "honeycomb": lambda a: "hcaik_" + rs(58, LO + DIG),
    "frameio": lambda a: "fio-u-" + rs(64, B64U),
    "cloudinary": lambda a: rs(27, B64U),
    "nvapi": lambda a: "nvapi-" + rs(64, B64U),
    "zhipu": lambda a: hx(32) + "." + rs(16),
    "gemini": lambda a: "AIzaSy" + rs(33, B64U),
    "deepseek": lambda a: "sk-" + hx(32),
    "fireworks": lambda a: "fw_" + rs(24),
    "langfuse": lambda a: "sk-lf-" + ruuid(),
    "intercom": lambda a: "dG9rOj" + rs(54, ALNUM) + "=",
    "planetscale_id": lambda a: rs(12, LO + DIG),
    "postman": lambda a: "PMAK-" + hx(24) + "-" + hx(34),
    "bitbucket_ata": lambda a: "ATCTT3xFfGN0" + rs(170, B64U) + "=" + hx(8).upper(),
    "azure_devops": lambda a: rs(52, LO + DIG),
    "expo": lambda a: rs(40, B64U),
    "snyk": lambda a: ruuid(),
}


PH = re.compile(r"⟪([A-Za-z_0-9]+)(?::([A-Za-z0-9]+))?⟫")

USERS = [
    "mkowalski",
    "asato",
    "jdoe",
    "lnguyen",
    "pmartin",
    "rsingh",
    "ebrown",
    "tkaya",
    "ofischer",
    "dsilva",
    "hkim",
    "vpetrov",
    "cgarcia",
    "nmorales",
    "bwilliams",
    "aokafor",
    "yzhang",
    "sdubois",
    "lrossi",
    "fjensen",
]
HOSTS = [
    "db-prod-01.internal",
    "pg-replica.eu-west-1.rds.amazonaws.com",
    "mysql.staging.acme.io",
    "10.20.4.17",
    "redis-cache.svc.cluster.local",
    "mongo-0.mongo.data.svc",
    "ledger-db.corp.example",
    "172.31.9.44",
    "billing-db.c7xk2p.us-east-1.rds.amazonaws.com",
    "warehouse.northwind.lan",
]
PROJS = [
    "ledger",
    "billing",
    "atlas",
    "orbit",
    "payments-api",
    "inventory",
    "mobile-app",
    "data-pipeline",
    "search",
    "notifier",
]


def fill(template, secret, cache=None):
    cache = {} if cache is None else cache
    cache.setdefault("S", secret)

    def sub(m):
        key = m.group(0)
        name, arg = m.group(1), m.group(2)
        if name == "S":
            return secret
        if key in cache:
            return cache[key]
        base = re.sub(r"\d+$", "", name)
        if base == "USER":
            v = R.choice(USERS)
        elif base == "HOST":
            v = R.choice(HOSTS)
        elif base == "PROJ":
            v = R.choice(PROJS)
        elif base == "SHA":
            v = hx(40)
        elif base == "SHORT":
            v = hx(7)
        elif base == "IP":
            v = "%d.%d.%d.%d" % (
                R.choice([10, 172, 192]),
                R.randrange(256),
                R.randrange(256),
                R.randrange(1, 255),
            )
        elif base == "DATE":
            v = "2025-%02d-%02d" % (R.randrange(1, 13), R.randrange(1, 29))
        elif base == "TIME":
            v = "%02d:%02d:%02d" % (R.randrange(24), R.randrange(60), R.randrange(60))
        elif base == "N":
            v = str(R.randrange(2, 999))
        elif base == "PORT":
            v = str(R.choice([5432, 3306, 6379, 27017, 5672, 9092, 1433, 8080]))
        elif base == "EMAIL":
            v = (
                R.choice(USERS)
                + "@"
                + R.choice(["acme.io", "northwind.dev", "globex.com", "initech.example"])
            )
        elif name in GEN:
            v = GEN[name](arg)
        elif base in GEN:  # e.g. ⟪uuid2⟫: a second, different uuid
            v = GEN[base](arg)
        else:
            raise KeyError(key)
        cache[key] = v
        return v

    return PH.sub(sub, template)


# --------------------------------------------------------------------------
# CORPUS TABLE 1 -- vendor tokens recognisable by their own format
# (kind, shape, secret generator, template with ⟪S⟫ for the secret)
# --------------------------------------------------------------------------
P, C = "provider", "context"
CORPUS = [
    (
        "ghp_token_in_gh_hosts_yml_oauth_field",
        P,
        "ghp",
        """$ cat ~/.config/gh/hosts.yml
github.com:
    user: ⟪USER⟫
    oauth_token: ⟪S⟫
    git_protocol: ssh""",
    ),
    (
        "gho_token_printed_by_gh_auth_token_in_session",
        P,
        "gho",
        """Ran `gh auth token` to check which account the CLI was using:

```
$ gh auth token
⟪S⟫
```
It's the ⟪USER⟫ account, so the push failure is a permissions issue on the org, not auth.""",
    ),
    (
        "ghu_user_to_server_token_in_app_callback_log",
        P,
        "ghu",
        """⟪DATE⟫T⟪TIME⟫Z INFO  oauth.callback installation=⟪dig:8⟫ user=⟪USER⟫ exchanged code for token access_token=⟪S⟫ expires_in=28800 refresh_token_expires_in=15897600""",
    ),
    (
        "ghr_refresh_token_in_sqlite_dump",
        P,
        "ghr",
        """sqlite> SELECT id, login, refresh_token FROM github_identities LIMIT 2;
17|⟪USER⟫|⟪S⟫
18|⟪USER2⟫|""",
    ),
    (
        "ghs_installation_token_in_terraform_plan_output",
        P,
        "ghs",
        """  # github_actions_secret.deploy will be created
  + resource "github_actions_secret" "deploy" {
      + created_at      = (known after apply)
      + plaintext_value = "⟪S⟫"
      + repository      = "⟪PROJ⟫"
      + secret_name     = "DEPLOY_TOKEN"
    }""",
    ),
    (
        "github_fine_grained_pat_in_dependabot_registries",
        P,
        "ghfg",
        """version: 2
registries:
  npm-github:
    type: npm-registry
    url: https://npm.pkg.github.com
    token: ⟪S⟫
updates:
  - package-ecosystem: npm
    directory: "/"
    registries: [npm-github]
    schedule:
      interval: weekly""",
    ),
    (
        "github_fine_grained_pat_go_private_netrc_dockerfile",
        P,
        "ghfg",
        """FROM golang:1.23 AS build
ENV GOPRIVATE=github.com/acme/*
RUN echo "machine github.com login x-access-token password ⟪S⟫" > /root/.netrc
COPY . /src
RUN cd /src && go build ./cmd/server""",
    ),
    (
        "npm_automation_token_in_yarnrc_yml",
        P,
        "npm",
        """nodeLinker: node-modules
npmScopes:
  acme:
    npmAlwaysAuth: true
    npmAuthToken: ⟪S⟫
    npmRegistryServer: "https://registry.npmjs.org\"""",
    ),
    (
        "npm_token_in_npm_config_set_history",
        P,
        "npm",
        """  512  nvm use 20
  513  npm config set //registry.npmjs.org/:_authToken ⟪S⟫
  514  npm publish --access public
  515  git tag v⟪N⟫.0.1""",
    ),
    (
        "gitlab_pat_in_python_gitlab_cfg",
        P,
        "glpat",
        """[global]
default = work
ssl_verify = true
timeout = 5

[work]
url = https://gitlab.acme.io
private_token = ⟪S⟫
api_version = 4""",
    ),
    (
        "gitlab_deploy_token_in_helm_repo_add",
        P,
        "gldt",
        """helm repo add acme-charts https://gitlab.acme.io/api/v4/projects/⟪N⟫/packages/helm/stable \\
  --username deploy-token-⟪N2⟫ --password ⟪S⟫
helm repo update""",
    ),
    (
        "gitlab_runner_auth_token_in_config_toml",
        P,
        "glrt",
        """concurrent = 4
check_interval = 0

[[runners]]
  name = "docker-ci-⟪N⟫"
  url = "https://gitlab.acme.io"
  token = "⟪S⟫"
  executor = "docker"
  [runners.docker]
    image = "alpine:3.20"
    privileged = false""",
    ),
    (
        "gitlab_trigger_token_curl_pipeline",
        P,
        "glptt",
        """curl -X POST --fail \\
     -F token=⟪S⟫ \\
     -F ref=main \\
     -F "variables[DEPLOY_ENV]=staging" \\
     https://gitlab.acme.io/api/v4/projects/⟪N⟫/trigger/pipeline""",
    ),
    (
        "gitlab_feed_token_in_calendar_url_note",
        P,
        "glft",
        """Subscribed the team calendar to the issues feed:
https://gitlab.acme.io/acme/⟪PROJ⟫/-/issues.ics?due_date=next_month_and_previous_two_weeks&feed_token=⟪S⟫&state=opened""",
    ),
    (
        "gitlab_oauth_app_secret_in_grafana_ini",
        P,
        "gloas",
        """[auth.gitlab]
enabled = true
allow_sign_up = true
client_id = ⟪hex:64⟫
client_secret = ⟪S⟫
scopes = openid email profile
auth_url = https://gitlab.acme.io/oauth/authorize""",
    ),
    (
        "pypi_token_in_twine_env_gh_step",
        P,
        "pypi",
        """      - name: Publish
        env:
          TWINE_USERNAME: __token__
          TWINE_PASSWORD: ⟪S⟫
        run: twine upload dist/*""",
    ),
    (
        "slack_bot_token_in_bolt_python_app",
        P,
        "xoxb",
        """from slack_bolt import App

app = App(
    token="⟪S⟫",
    signing_secret=os.environ["SLACK_SIGNING_SECRET"],
)

@app.command("/deploy")
def deploy(ack, body):
    ack("Deploying...")""",
    ),
    (
        "slack_user_token_in_curl_conversations_history",
        P,
        "xoxp",
        """curl -s -H 'Authorization: Bearer ⟪S⟫' \\
  'https://slack.com/api/conversations.history?channel=C0⟪up:8⟫&limit=200' | jq '.messages[].text'""",
    ),
    (
        "slack_incoming_webhook_in_alert_rule_annotation",
        P,
        "slackhook",
        """receivers:
  - name: oncall-slack
    slack_configs:
      - api_url: ⟪S⟫
        channel: '#alerts-prod'
        send_resolved: true
        title: '{{ .CommonLabels.alertname }}'""",
    ),
    (
        "stripe_live_secret_in_laravel_services_env",
        P,
        "sk_live",
        """APP_ENV=production
APP_DEBUG=false
CASHIER_CURRENCY=eur
STRIPE_KEY=pk_live_51⟪an:97⟫
STRIPE_SECRET=⟪S⟫""",
    ),
    (
        "stripe_restricted_key_in_ruby_initializer",
        P,
        "rk_live",
        """# config/initializers/stripe.rb
Stripe.api_key = '⟪S⟫'
Stripe.api_version = '2024-06-20'
Stripe.max_network_retries = 2""",
    ),
    (
        "stripe_webhook_signing_secret_in_go_handler",
        P,
        "whsec",
        """func webhookHandler(w http.ResponseWriter, r *http.Request) {
	payload, _ := io.ReadAll(r.Body)
	endpointSecret := "⟪S⟫"
	event, err := webhook.ConstructEvent(payload, r.Header.Get("Stripe-Signature"), endpointSecret)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}""",
    ),
    (
        "aws_session_key_id_in_sts_assume_role_json",
        P,
        "asia",
        """$ aws sts assume-role --role-arn arn:aws:iam::⟪dig:12⟫:role/deployer --role-session-name ci
{
    "Credentials": {
        "AccessKeyId": "⟪S⟫",
        "Expiration": "⟪DATE⟫T⟪TIME⟫+00:00"
    }
}""",
    ),
    (
        "google_api_key_in_android_gradle_properties",
        P,
        "aiza",
        """org.gradle.jvmargs=-Xmx4g
android.useAndroidX=true
MAPS_SERVER_GEOCODING_KEY=⟪S⟫
kotlin.code.style=official""",
    ),
    (
        "google_oauth_client_secret_in_rclone_conf",
        P,
        "gocspx",
        """[gdrive-backup]
type = drive
client_id = ⟪dig:12⟫-⟪lo:32⟫.apps.googleusercontent.com
client_secret = ⟪S⟫
scope = drive.file
root_folder_id = 1⟪b64u:24⟫""",
    ),
    (
        "google_access_token_ya29_in_curl_verbose",
        P,
        "ya29",
        """> GET /storage/v1/b/acme-backups/o?prefix=db%2F HTTP/2
> Host: storage.googleapis.com
> user-agent: curl/8.5.0
> authorization: Bearer ⟪S⟫
>
< HTTP/2 200""",
    ),
    (
        "google_refresh_token_in_clasprc_json",
        P,
        "g1",
        """{"token":{"access_token":"","refresh_token":"⟪S⟫","scope":"https://www.googleapis.com/auth/script.projects","token_type":"Bearer","expiry_date":1735689600000},"oauth2ClientSettings":{"clientId":"⟪dig:12⟫-⟪lo:32⟫.apps.googleusercontent.com","redirectUri":"http://localhost"},"isLocalCreds":false}""",
    ),
    (
        "openai_project_key_in_continue_config_yaml",
        P,
        "openai",
        """name: Local Assistant
version: 1.0.0
models:
  - name: gpt-4o
    provider: openai
    model: gpt-4o
    apiKey: ⟪S⟫
    roles: [chat, edit]""",
    ),
    (
        "openai_service_account_key_in_langchain_ts",
        P,
        "openai_svc",
        """import { ChatOpenAI } from "@langchain/openai";

const llm = new ChatOpenAI({
  model: "gpt-4o-mini",
  temperature: 0,
  apiKey: "⟪S⟫",
});""",
    ),
    (
        "anthropic_key_in_litellm_proxy_config",
        P,
        "anthropic",
        """model_list:
  - model_name: claude-sonnet
    litellm_params:
      model: anthropic/claude-3-5-sonnet-20241022
      api_key: ⟪S⟫
general_settings:
  master_key: os.environ/LITELLM_MASTER_KEY""",
    ),
    (
        "anthropic_admin_key_usage_report_curl",
        P,
        "ant_admin",
        """curl "https://api.anthropic.com/v1/organizations/usage_report/messages?starting_at=⟪DATE⟫T00:00:00Z" \\
  --header "anthropic-version: 2023-06-01" \\
  --header "x-api-key: ⟪S⟫\"""",
    ),
    (
        "huggingface_token_in_hf_cli_login_history",
        P,
        "hf",
        """$ huggingface-cli login --token ⟪S⟫ --add-to-git-credential
Token is valid (permission: write).
Your token has been saved in your configured git credential helpers (store).""",
    ),
    (
        "sendgrid_key_in_django_settings_email_backend",
        P,
        "sendgrid",
        """EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
EMAIL_HOST = "smtp.sendgrid.net"
EMAIL_PORT = 587
EMAIL_USE_TLS = True
EMAIL_HOST_USER = "apikey"
EMAIL_HOST_PASSWORD = "⟪S⟫\"""",
    ),
    (
        "mailgun_legacy_key_in_php_mailer_dsn",
        P,
        "mailgun",
        """###> symfony/mailgun-mailer ###
MAILER_DSN=mailgun+api://⟪S⟫:mg.acme.io@default?region=eu
###< symfony/mailgun-mailer ###""",
    ),
    (
        "shopify_admin_token_in_theme_kit_config",
        P,
        "shpat",
        """development:
  password: ⟪S⟫
  theme_id: "⟪dig:12⟫"
  store: acme-outdoor.myshopify.com
  ignore_files:
    - config/settings_data.json""",
    ),
    (
        "shopify_shared_secret_hmac_verify_node",
        P,
        "shpss",
        """const SHOPIFY_SECRET = '⟪S⟫';

function verifyWebhook(req) {
  const digest = crypto.createHmac('sha256', SHOPIFY_SECRET).update(req.rawBody).digest('base64');
  return crypto.timingSafeEqual(Buffer.from(digest), Buffer.from(req.get('X-Shopify-Hmac-Sha256')));
}""",
    ),
    (
        "shopify_custom_app_token_in_session_prose",
        P,
        "shpca",
        """I tested the GraphQL bulk export against the dev store using the custom app token ⟪S⟫ — the bulk operation finished in 41s, so the job timeout of 60s is fine.""",
    ),
    (
        "atlassian_api_token_in_go_jira_config",
        P,
        "atatt",
        """endpoint: https://acme.atlassian.net
user: ⟪EMAIL⟫
login: ⟪EMAIL⟫
authentication-method: api-token
password-source: none
api-token: ⟪S⟫
project: OPS""",
    ),
    (
        "digitalocean_pat_in_doctl_config_yaml",
        P,
        "dop",
        """access-token: ⟪S⟫
context: default
output: text
apps.create.upsert: false""",
    ),
    (
        "databricks_pat_in_databrickscfg",
        P,
        "dapi",
        """[DEFAULT]
host  = https://adb-⟪dig:16⟫.⟪dig:1⟫.azuredatabricks.net
token = ⟪S⟫

[staging]
host  = https://adb-⟪dig:16⟫.⟪dig:1⟫.azuredatabricks.net
token = ${DATABRICKS_STAGING_TOKEN}""",
    ),
    (
        "doppler_service_token_in_compose_environment",
        P,
        "doppler",
        """services:
  api:
    image: ghcr.io/acme/⟪PROJ⟫:latest
    command: ["doppler", "run", "--", "node", "dist/server.js"]
    environment:
      DOPPLER_TOKEN: ⟪S⟫
    ports: ["8080:8080"]""",
    ),
    (
        "vault_service_token_in_vault_agent_log",
        P,
        "hvs",
        """⟪DATE⟫T⟪TIME⟫.112Z [INFO]  agent.auth.handler: authentication successful, sending token to sinks
⟪DATE⟫T⟪TIME⟫.113Z [DEBUG] agent.sink.file: token written: path=/home/vault/.vault-token token=⟪S⟫
⟪DATE⟫T⟪TIME⟫.113Z [INFO]  agent.auth.handler: starting renewal process""",
    ),
    (
        "terraform_cloud_token_in_terraformrc",
        P,
        "tfc",
        """plugin_cache_dir = "$HOME/.terraform.d/plugin-cache"

credentials "app.terraform.io" {
  token = "⟪S⟫"
}""",
    ),
    (
        "pulumi_access_token_in_ci_script_export",
        P,
        "pulumi",
        """#!/usr/bin/env bash
set -euo pipefail
export PULUMI_ACCESS_TOKEN=⟪S⟫
pulumi login
pulumi stack select acme/⟪PROJ⟫/prod
pulumi up --yes --skip-preview""",
    ),
    (
        "linear_api_key_in_raycast_extension_prefs",
        P,
        "linear",
        """{
  "extension": "linear",
  "preferences": {
    "apiKey": "⟪S⟫",
    "defaultTeam": "ENG",
    "showCompletedIssues": false
  }
}""",
    ),
    (
        "notion_integration_token_in_python_client",
        P,
        "ntn",
        """from notion_client import Client

notion = Client(auth="⟪S⟫")
db = notion.databases.query(database_id="⟪hex:32⟫", filter={"property": "Status", "status": {"equals": "Done"}})""",
    ),
    (
        "discord_bot_token_in_discordjs_login",
        P,
        "discord",
        """client.once(Events.ClientReady, c => {
  console.log(`Ready! Logged in as ${c.user.tag}`);
});

client.login('⟪S⟫');""",
    ),
    (
        "discord_webhook_in_github_workflow_curl",
        P,
        "discordhook",
        """      - name: Notify Discord
        if: failure()
        run: |
          curl -H "Content-Type: application/json" \\
            -d '{"content":"Build failed on ${{ github.ref_name }}"}' \\
            ⟪S⟫""",
    ),
    (
        "telegram_bot_token_in_systemd_environment",
        P,
        "telegram",
        """[Unit]
Description=Uptime alert bot
After=network-online.target

[Service]
Environment=TG_BOT_TOKEN=⟪S⟫
Environment=TG_CHAT_ID=-100⟪dig:10⟫
ExecStart=/opt/alertbot/bin/alertbot
Restart=always

[Install]
WantedBy=multi-user.target""",
    ),
    (
        "square_access_token_in_java_client_builder",
        P,
        "square",
        """SquareClient client = new SquareClient.Builder()
    .environment(Environment.PRODUCTION)
    .bearerAuthCredentials(new BearerAuthModel.Builder("⟪S⟫").build())
    .build();""",
    ),
    (
        "square_oauth_client_secret_in_properties",
        P,
        "sq0csp",
        """square.application-id=sq0idp-⟪b64u:16⟫
square.application-secret=⟪S⟫
square.redirect-uri=https://pos.acme.io/oauth/callback""",
    ),
    (
        "planetscale_password_in_prisma_database_url",
        P,
        "pscale",
        """DATABASE_URL="mysql://⟪planetscale_id⟫:⟪S⟫@aws.connect.psdb.cloud/⟪PROJ⟫?sslaccept=strict\"""",
    ),
    (
        "planetscale_service_token_in_ci_env_block",
        P,
        "pscale_tkn",
        """env:
  PLANETSCALE_SERVICE_TOKEN_ID: ⟪lo:12⟫
  PLANETSCALE_SERVICE_TOKEN: ⟪S⟫
  PLANETSCALE_ORG: acme""",
    ),
    (
        "supabase_management_token_in_mcp_server_args",
        P,
        "sbp",
        """{
  "mcpServers": {
    "supabase": {
      "command": "npx",
      "args": ["-y", "@supabase/mcp-server-supabase@latest", "--read-only", "--access-token", "⟪S⟫"]
    }
  }
}""",
    ),
    (
        "supabase_secret_key_in_edge_function_env",
        P,
        "sb_secret",
        """SUPABASE_URL=https://⟪lo:20⟫.supabase.co
SUPABASE_PUBLISHABLE_KEY=sb_publishable_⟪b64u:16⟫
SUPABASE_SECRET_KEY=⟪S⟫""",
    ),
    (
        "supabase_service_role_jwt_in_nextjs_server_file",
        P,
        "sb_jwt",
        """import { createClient } from '@supabase/supabase-js'

// server-only client, bypasses RLS
export const admin = createClient(
  'https://⟪lo:20⟫.supabase.co',
  '⟪S⟫',
  { auth: { persistSession: false } }
)""",
    ),
    (
        "sentry_org_token_in_sentryclirc",
        P,
        "sntrys",
        """[defaults]
org = acme
project = ⟪PROJ⟫

[auth]
token = ⟪S⟫""",
    ),
    (
        "sentry_user_token_in_fastlane_upload_dsym",
        P,
        "sntryu",
        """lane :upload_symbols do
  sentry_debug_files_upload(
    auth_token: '⟪S⟫',
    org_slug: 'acme',
    project_slug: 'ios-app',
    path: './build/dSYMs'
  )
end""",
    ),
    (
        "grafana_service_account_token_in_terraform_provider",
        P,
        "glsa",
        """provider "grafana" {
  url  = "https://grafana.acme.io/"
  auth = "⟪S⟫"
}""",
    ),
    (
        "grafana_cloud_token_in_alloy_config",
        P,
        "glc",
        """prometheus.remote_write "cloud" {
  endpoint {
    url = "https://prometheus-prod-24-prod-eu-west-2.grafana.net/api/prom/push"
    basic_auth {
      username = "⟪dig:7⟫"
      password = "⟪S⟫"
    }
  }
}""",
    ),
    (
        "newrelic_user_key_in_nerdgraph_curl",
        P,
        "nrak",
        """curl https://api.newrelic.com/graphql \\
  -H 'Content-Type: application/json' \\
  -H 'API-Key: ⟪S⟫' \\
  --data-binary '{"query":"{ actor { user { name email } } }"}'""",
    ),
    (
        "heroku_api_key_in_netrc_api_entry",
        P,
        "heroku",
        """machine api.heroku.com
  login ⟪EMAIL⟫
  password ⟪S⟫
machine git.heroku.com
  login ⟪EMAIL⟫
  password ⟪S⟫""",
    ),
    (
        "postman_api_key_in_newman_ci_command",
        P,
        "pmak",
        """newman run "https://api.getpostman.com/collections/⟪dig:8⟫-⟪uuid⟫?apikey=⟪S⟫" \\
  --environment staging.postman_environment.json --reporters cli,junit""",
    ),
    (
        "figma_pat_in_style_dictionary_script",
        P,
        "figd",
        """const FIGMA_FILE = '⟪b64u:16⟫';
const res = await fetch(`https://api.figma.com/v1/files/${FIGMA_FILE}/variables/local`, {
  headers: { 'X-Figma-Token': '⟪S⟫' },
});""",
    ),
    (
        "age_identity_in_sops_agent_session_paste",
        P,
        "age",
        """To decrypt the staging secrets locally I created `~/.config/sops/age/keys.txt` with:

```
# created: ⟪DATE⟫T⟪TIME⟫+02:00
# public key: age1⟪lo:58⟫
⟪S⟫
```
and `sops -d secrets/staging.enc.yaml` now works.""",
    ),
    (
        "bitcoin_wif_in_sweeper_python_constant",
        P,
        "wif",
        """# funding key for the mainnet hot wallet used by the sweeper
FUNDING_WIF = "⟪S⟫"
FUNDING_ADDRESS = "bc1q⟪lo:38⟫\"""",
    ),
    (
        "nostr_nsec_in_bot_env_file",
        P,
        "nsec",
        """NOSTR_RELAYS=wss://relay.damus.io,wss://nos.lol
NOSTR_BOT_NSEC=⟪S⟫
NOSTR_BOT_NAME=release-announcer""",
    ),
    (
        "mapbox_secret_token_in_tileset_upload_shell",
        P,
        "mapbox_sk",
        """export MAPBOX_ACCESS_TOKEN=⟪S⟫
tilesets upload-source acme-maps delivery-zones ./zones.geojson.ld
tilesets publish acme-maps.delivery-zones""",
    ),
    (
        "azure_ad_client_secret_in_msal_node_config",
        P,
        "azq",
        """const msalConfig = {
  auth: {
    clientId: "⟪uuid⟫",
    authority: "https://login.microsoftonline.com/⟪uuid2⟫",
    clientSecret: "⟪S⟫",
  },
};""",
    ),
    (
        "contentful_cma_token_in_migration_cli",
        P,
        "cfpat",
        """npx contentful space migration --space-id ⟪lo:12⟫ --environment-id master \\
  --management-token ⟪S⟫ migrations/0042-add-author-field.js""",
    ),
    (
        "dynatrace_api_token_in_operator_secret_cmd",
        P,
        "dt0c01",
        """kubectl -n dynatrace create secret generic dynakube \\
  --from-literal="apiToken=⟪S⟫" \\
  --from-literal="dataIngestToken=${DT_INGEST_TOKEN}\"""",
    ),
    (
        "netlify_pat_in_netlify_cli_deploy",
        P,
        "nfp",
        """$ NETLIFY_AUTH_TOKEN=⟪S⟫ netlify deploy --prod --dir=dist --site ⟪uuid⟫
Deploy path: /home/⟪USER⟫/src/site/dist
Deploying to main site URL...""",
    ),
    (
        "render_api_key_in_deploy_hook_script",
        P,
        "rnd",
        """#!/bin/sh
curl -sf -X POST "https://api.render.com/v1/services/srv-⟪lo:20⟫/deploys" \\
  -H "Authorization: Bearer ⟪S⟫" -H "Accept: application/json\"""",
    ),
    (
        "replicate_token_in_jupyter_cell",
        P,
        "r8",
        """In [3]: import replicate, os
In [4]: os.environ["REPLICATE_API_TOKEN"] = "⟪S⟫"
In [5]: out = replicate.run("black-forest-labs/flux-schnell", input={"prompt": "a lighthouse at dusk"})""",
    ),
    (
        "groq_key_in_aider_conf_yml",
        P,
        "gsk",
        """model: groq/llama-3.3-70b-versatile
api-key:
  - groq=⟪S⟫
auto-commits: false
dark-mode: true""",
    ),
    (
        "perplexity_key_in_openai_compat_client",
        P,
        "pplx",
        """client = OpenAI(api_key="⟪S⟫", base_url="https://api.perplexity.ai")
resp = client.chat.completions.create(model="sonar-pro", messages=msgs)""",
    ),
    (
        "xai_key_in_rust_reqwest_client",
        P,
        "xai",
        """let client = reqwest::Client::new();
let resp = client
    .post("https://api.x.ai/v1/chat/completions")
    .bearer_auth("⟪S⟫")
    .json(&body)
    .send()
    .await?;""",
    ),
    (
        "openrouter_key_in_zed_settings_json",
        P,
        "openrouter",
        """{
  "language_models": {
    "openai": {
      "api_url": "https://openrouter.ai/api/v1",
      "api_key": "⟪S⟫",
      "available_models": [{ "name": "deepseek/deepseek-chat", "max_tokens": 64000 }]
    }
  }
}""",
    ),
    (
        "tailscale_auth_key_in_cloud_init",
        P,
        "tskey_auth",
        """#cloud-config
runcmd:
  - curl -fsSL https://tailscale.com/install.sh | sh
  - tailscale up --authkey=⟪S⟫ --advertise-tags=tag:ci --ssh""",
    ),
    (
        "tailscale_api_key_in_acl_gitops_workflow",
        P,
        "tskey_api",
        """      - name: Deploy ACL
        uses: tailscale/gitops-acl-action@v1
        with:
          api-key: ⟪S⟫
          tailnet: acme.io
          action: apply""",
    ),
    (
        "clerk_secret_key_in_remix_env",
        P,
        "clerk_sk",
        """CLERK_PUBLISHABLE_KEY=⟪clerk_pk⟫
CLERK_SECRET_KEY=⟪S⟫
CLERK_SIGN_IN_URL=/sign-in""",
    ),
    (
        "resend_key_in_bun_script",
        P,
        "resend",
        """import { Resend } from 'resend';
const resend = new Resend('⟪S⟫');
await resend.emails.send({ from: 'ops@acme.io', to: '⟪EMAIL⟫', subject: 'Nightly report', html });""",
    ),
    (
        "mailchimp_key_with_dc_suffix_in_php",
        P,
        "mailchimp",
        """$mailchimp = new \\MailchimpMarketing\\ApiClient();
$mailchimp->setConfig([
    'apiKey' => '⟪S⟫',
    'server' => 'us14',
]);""",
    ),
    (
        "sonarqube_user_token_in_sonar_scanner_cmd",
        P,
        "squ",
        """sonar-scanner \\
  -Dsonar.projectKey=acme_⟪PROJ⟫ \\
  -Dsonar.sources=src \\
  -Dsonar.host.url=https://sonar.acme.io \\
  -Dsonar.token=⟪S⟫""",
    ),
    (
        "sonarqube_project_token_in_maven_settings",
        P,
        "sqp",
        """<profile>
  <id>sonar</id>
  <properties>
    <sonar.host.url>https://sonar.acme.io</sonar.host.url>
    <sonar.login>⟪S⟫</sonar.login>
  </properties>
</profile>""",
    ),
    (
        "docker_hub_pat_in_docker_login_stdin_history",
        P,
        "dckr",
        """ 2041  echo ⟪S⟫ | docker login -u ⟪USER⟫ --password-stdin
 2042  docker buildx build --platform linux/amd64,linux/arm64 -t ⟪USER⟫/⟪PROJ⟫:1.4.0 --push .""",
    ),
    (
        "jfrog_api_key_in_gradle_properties",
        P,
        "akcp",
        """artifactory_contextUrl=https://acme.jfrog.io/artifactory
artifactory_user=⟪USER⟫
artifactory_password=⟪S⟫""",
    ),
    (
        "shippo_live_token_in_python_sdk",
        P,
        "shippo",
        """import shippo
shippo_sdk = shippo.Shippo(api_key_header="ShippoToken ⟪S⟫")""",
    ),
    (
        "easypost_prod_key_in_csharp_client",
        P,
        "ezak",
        """var client = new EasyPost.Client(new ClientConfiguration("⟪S⟫"));
var shipment = await client.Shipment.Create(parameters);""",
    ),
    (
        "paystack_secret_in_flutter_dotenv",
        P,
        "paystack",
        """PAYSTACK_PUBLIC_KEY=pk_live_⟪hex:40⟫
PAYSTACK_SECRET_KEY=⟪S⟫
PAYSTACK_CALLBACK=https://shop.acme.ng/paystack/callback""",
    ),
    (
        "flutterwave_secret_in_express_route",
        P,
        "flw",
        """const flw = new Flutterwave('FLWPUBK-⟪hex:32⟫-X', '⟪S⟫');

router.post('/verify', async (req, res) => {
  const r = await flw.Transaction.verify({ id: req.body.transaction_id });""",
    ),
    (
        "langsmith_key_in_env_example_that_is_not_an_example",
        P,
        "lsv2",
        """# copy to .env -- values below are the shared team ones, don't rotate without telling #ml-platform
LANGSMITH_TRACING=true
LANGSMITH_ENDPOINT=https://api.smith.langchain.com
LANGSMITH_API_KEY=⟪S⟫
LANGSMITH_PROJECT=rag-eval""",
    ),
    (
        "pinecone_key_in_llamaindex_notebook",
        P,
        "pcsk",
        """pc = Pinecone(api_key="⟪S⟫")
index = pc.Index("docs-prod")
vector_store = PineconeVectorStore(pinecone_index=index)""",
    ),
    (
        "buildkite_user_token_in_bk_config_toml",
        P,
        "bkua",
        """selected_org = "acme"

[organizations.acme]
api_token = "⟪S⟫\"""",
    ),
    (
        "circleci_personal_token_in_api_curl",
        P,
        "ccipat",
        """curl -X POST https://circleci.com/api/v2/project/gh/acme/⟪PROJ⟫/pipeline \\
  -H "Circle-Token: ⟪S⟫" \\
  -H 'Content-Type: application/json' -d '{"branch":"main"}'""",
    ),
    (
        "prefect_api_key_in_profiles_toml",
        P,
        "pnu",
        """active = "cloud"

[profiles.cloud]
PREFECT_API_URL = "https://api.prefect.cloud/api/accounts/⟪uuid⟫/workspaces/⟪uuid2⟫"
PREFECT_API_KEY = "⟪S⟫\"""",
    ),
    (
        "airtable_pat_in_n8n_credential_export",
        P,
        "airtable",
        """[
  {
    "id": "⟪an:16⟫",
    "name": "Airtable ops base",
    "type": "airtableTokenApi",
    "data": { "accessToken": "⟪S⟫" }
  }
]""",
    ),
    (
        "clickup_personal_token_in_zapier_code_step",
        P,
        "clickup",
        """const res = await fetch('https://api.clickup.com/api/v2/list/⟪dig:9⟫/task', {
  method: 'POST',
  headers: { Authorization: '⟪S⟫', 'Content-Type': 'application/json' },
  body: JSON.stringify({ name: inputData.subject }),
});""",
    ),
    (
        "asana_pat_in_python_asana_configuration",
        P,
        "asana",
        """configuration = asana.Configuration()
configuration.access_token = '⟪S⟫'
api_client = asana.ApiClient(configuration)""",
    ),
    (
        "trello_token_in_power_up_query_string",
        P,
        "trello",
        """GET https://api.trello.com/1/boards/⟪an:8⟫/cards?key=⟪hex:32⟫&token=⟪S⟫ 200 OK (412 ms)""",
    ),
    (
        "dropbox_short_lived_token_in_rclone_debug",
        P,
        "dropbox",
        """2025/03/02 10:14:07 DEBUG : Using config file from "/home/⟪USER⟫/.config/rclone/rclone.conf"
2025/03/02 10:14:07 DEBUG : dropbox: token = {"access_token":"⟪S⟫","token_type":"bearer","expiry":"2025-03-02T14:13:55+01:00"}""",
    ),
    (
        "fcm_legacy_server_key_in_php_push",
        P,
        "fcm",
        """$headers = [
    'Authorization: key=⟪S⟫',
    'Content-Type: application/json',
];
curl_setopt($ch, CURLOPT_URL, 'https://fcm.googleapis.com/fcm/send');""",
    ),
    (
        "facebook_page_token_in_graph_api_explorer_note",
        P,
        "fb",
        """Got a long-lived page token for the Acme Outdoor page from the Graph API explorer, using it in the scheduler for now:
⟪S⟫
(expires in 60 days, ticket MKT-⟪N⟫ to move it to a system user)""",
    ),
    (
        "twitter_app_bearer_in_tweepy_client",
        P,
        "twbearer",
        """client = tweepy.Client(bearer_token="⟪S⟫")
tweets = client.search_recent_tweets(query="from:acme_status -is:retweet", max_results=50)""",
    ),
    (
        "salesforce_session_id_in_sfdx_debug_log",
        P,
        "sfdc",
        """DEBUG [sfdx] org display --json
{"status":0,"result":{"id":"00D⟪an:15⟫","accessToken":"⟪S⟫","instanceUrl":"https://acme.my.salesforce.com","username":"⟪EMAIL⟫"}}""",
    ),
    (
        "vk_community_token_in_php_bot",
        P,
        "vk",
        """$vk = new VKApiClient('5.199');
$access_token = '⟪S⟫';
$vk->messages()->send($access_token, ['peer_id' => $peerId, 'message' => $text, 'random_id' => 0]);""",
    ),
    (
        "yandex_cloud_iam_token_in_yc_curl",
        P,
        "yandex_iam",
        """curl -H "Authorization: Bearer ⟪S⟫" \\
  https://compute.api.cloud.yandex.net/compute/v1/instances?folderId=b1g⟪lo:17⟫""",
    ),
    (
        "yandex_cloud_api_key_in_speechkit_python",
        P,
        "yandex_api",
        """headers = {"Authorization": "Api-Key ⟪S⟫"}
resp = requests.post("https://stt.api.cloud.yandex.net/speech/v1/stt:recognize", headers=headers, data=audio)""",
    ),
    (
        "akamai_edgerc_client_token",
        P,
        "akab",
        """[default]
client_secret = ⟪b64:32⟫
host = akab-⟪lo:16⟫-⟪lo:16⟫.luna.akamaiapis.net
access_token = akab-⟪lo:16⟫-⟪lo:16⟫
client_token = ⟪S⟫""",
    ),
    (
        "braintree_access_token_in_paypal_sdk_env",
        P,
        "braintree",
        """BRAINTREE_ACCESS_TOKEN=⟪S⟫
BRAINTREE_MERCHANT_ACCOUNT=acme_eur""",
    ),
    (
        "adyen_api_key_in_spring_application_yml",
        P,
        "adyen",
        """adyen:
  environment: LIVE
  live-endpoint-url-prefix: ⟪hex:16⟫-AcmeOutdoor
  api-key: "⟪S⟫"
  merchant-account: AcmeOutdoorECOM""",
    ),
    (
        "gocardless_live_token_in_ruby_client",
        P,
        "gocardless",
        """client = GoCardlessPro::Client.new(
  access_token: "⟪S⟫",
  environment: :live
)""",
    ),
    (
        "fly_macaroon_token_in_fly_deploy_env",
        P,
        "fly",
        """      - run: flyctl deploy --remote-only
        env:
          FLY_API_TOKEN: "⟪S⟫\"""",
    ),
    (
        "cloudflare_origin_ca_key_in_cert_manager_issuer",
        P,
        "cforigin",
        """apiVersion: v1
kind: Secret
metadata:
  name: origin-ca-key
  namespace: cert-manager
stringData:
  key: ⟪S⟫""",
    ),
    (
        "nuget_api_key_in_dotnet_push_history",
        P,
        "nuget",
        """PS C:\\src\\Acme.Ledger> dotnet nuget push .\\bin\\Release\\Acme.Ledger.3.2.0.nupkg --api-key ⟪S⟫ --source https://api.nuget.org/v3/index.json
Pushing Acme.Ledger.3.2.0.nupkg to 'https://www.nuget.org/api/v2/package'...""",
    ),
    (
        "rubygems_api_key_in_gem_credentials",
        P,
        "rubygems",
        """---
:rubygems_api_key: ⟪S⟫""",
    ),
    (
        "crates_io_token_in_cargo_credentials_toml",
        P,
        "cratesio",
        """[registry]
token = "⟪S⟫\"""",
    ),
    (
        "duffel_live_token_in_kotlin_retrofit",
        P,
        "duffel",
        """private val client = OkHttpClient.Builder()
    .addInterceptor { chain ->
        chain.proceed(chain.request().newBuilder()
            .header("Authorization", "Bearer ⟪S⟫")
            .header("Duffel-Version", "v2").build())
    }.build()""",
    ),
    (
        "mailersend_token_in_laravel_config",
        P,
        "mlsn",
        """MAIL_MAILER=mailersend
MAILERSEND_API_KEY=⟪S⟫
MAIL_FROM_ADDRESS=noreply@acme.io""",
    ),
    (
        "harness_pat_in_harness_cli_login",
        P,
        "harness",
        """$ harness login --api-key ⟪S⟫ --account-id ⟪b64u:16⟫
Successfully logged in""",
    ),
    (
        "sourcegraph_token_in_src_cli_env",
        P,
        "sgp",
        """export SRC_ENDPOINT=https://sourcegraph.acme.io
export SRC_ACCESS_TOKEN=⟪S⟫
src search 'repo:^github.com/acme/ lang:go context.WithTimeout count:all'""",
    ),
    (
        "onepassword_service_account_token_in_gha",
        P,
        "ops",
        """      - name: Load secrets
        uses: 1password/load-secrets-action@v2
        env:
          OP_SERVICE_ACCOUNT_TOKEN: ⟪S⟫
          DB_PASSWORD: op://ci/postgres/password""",
    ),
    (
        "generic_hs256_jwt_in_har_export",
        P,
        "jwt",
        """{
  "request": {
    "method": "GET",
    "url": "https://api.acme.io/v2/accounts/me",
    "headers": [
      {"name": "accept", "value": "application/json"},
      {"name": "authorization", "value": "Bearer ⟪S⟫"}
    ]
  }
}""",
    ),
    (
        "k8s_service_account_jwt_in_kubeconfig_user",
        P,
        "k8s_jwt",
        """users:
- name: ci-deployer
  user:
    token: ⟪S⟫
contexts:
- context: {cluster: prod-eu, namespace: ci, user: ci-deployer}
  name: prod-eu-ci""",
    ),
    (
        "honeycomb_ingest_key_in_otel_collector_headers",
        P,
        "honeycomb",
        """exporters:
  otlp/honeycomb:
    endpoint: api.honeycomb.io:443
    headers:
      x-honeycomb-team: ⟪S⟫
      x-honeycomb-dataset: ⟪PROJ⟫""",
    ),
    (
        "nvidia_nim_key_in_curl_chat",
        P,
        "nvapi",
        """curl https://integrate.api.nvidia.com/v1/chat/completions \\
  -H "Authorization: Bearer ⟪S⟫" \\
  -H "Content-Type: application/json" \\
  -d '{"model":"meta/llama-3.1-70b-instruct","messages":[{"role":"user","content":"hi"}]}'""",
    ),
    (
        "langfuse_secret_key_in_python_init",
        P,
        "langfuse",
        """langfuse = Langfuse(
    public_key="pk-lf-⟪uuid⟫",
    secret_key="⟪S⟫",
    host="https://cloud.langfuse.com",
)""",
    ),
    (
        "intercom_access_token_in_ruby_client",
        P,
        "intercom",
        """intercom = Intercom::Client.new(token: '⟪S⟫')
intercom.users.find(email: params[:email])""",
    ),
    (
        "bitbucket_api_token_in_bb_pipelines_clone_url",
        P,
        "bitbucket_ata",
        """+ git clone https://x-bitbucket-api-token-auth:⟪S⟫@bitbucket.org/acme/⟪PROJ⟫.git
Cloning into '⟪PROJ⟫'...""",
    ),
    (
        "gemini_key_in_google_genai_python",
        P,
        "gemini",
        """from google import genai
client = genai.Client(api_key="⟪S⟫")
resp = client.models.generate_content(model="gemini-2.0-flash", contents="Summarise the diff")""",
    ),
    (
        "deepseek_key_in_cline_mcp_settings",
        P,
        "deepseek",
        """{
  "apiProvider": "deepseek",
  "deepSeekApiKey": "⟪S⟫",
  "apiModelId": "deepseek-chat"
}""",
    ),
    (
        "aws_access_key_id_in_s3cmd_cfg",
        P,
        "akia",
        """[default]
access_key = ⟪S⟫
bucket_location = eu-central-1
host_base = s3.amazonaws.com
use_https = True""",
    ),
]

# --------------------------------------------------------------------------
# CORPUS TABLE 2 -- config files of many formats (secret known only by context)
# --------------------------------------------------------------------------
CORPUS += [
    (
        "ini_odbc_dsn_pwd_field",
        C,
        "pw",
        """[ReportingDW]
Driver=ODBC Driver 18 for SQL Server
Server=tcp:⟪HOST⟫,1433
Database=reporting
UID=svc_reports
PWD=⟪S⟫
Encrypt=yes""",
    ),
    (
        "ini_pgadmin_servers_passfile_line",
        C,
        "pw",
        """# ~/.pgpass  (hostname:port:database:username:password)
⟪HOST⟫:5432:*:⟪USER⟫:⟪S⟫
localhost:5432:devdb:dev:dev""",
    ),
    (
        "ini_mysql_client_section_in_my_cnf",
        C,
        "pw",
        """[client]
user=backup
password="⟪S⟫"
host=⟪HOST⟫

[mysqldump]
single-transaction
quick""",
    ),
    (
        "ini_supervisord_inet_http_server_password",
        C,
        "pw",
        """[inet_http_server]
port=127.0.0.1:9001
username=supervisor
password=⟪S⟫

[program:worker]
command=/srv/app/venv/bin/celery -A app worker -l info""",
    ),
    (
        "ini_php_fpm_pool_env_db_pass",
        C,
        "pw",
        """[www]
user = www-data
listen = /run/php/php8.3-fpm.sock
env[DB_HOST] = ⟪HOST⟫
env[DB_USER] = wordpress
env[DB_PASS] = ⟪S⟫
pm = dynamic""",
    ),
    (
        "ini_tox_testenv_setenv_token",
        C,
        "hex:40",
        """[testenv:integration]
deps = -r requirements-dev.txt
setenv =
    ACME_API_URL = https://sandbox.acme.io
    ACME_API_TOKEN = ⟪S⟫
commands = pytest tests/integration -x""",
    ),
    (
        "toml_pyproject_poetry_http_basic_repo",
        C,
        "pw",
        """[tool.poetry]
name = "acme-ledger"
version = "3.1.0"

[[tool.poetry.source]]
name = "internal"
url = "https://pypi.acme.io/simple/"
priority = "supplemental"

# poetry config http-basic.internal ci ⟪S⟫""",
    ),
    (
        "toml_streamlit_secrets_db_block",
        C,
        "pw",
        """[connections.warehouse]
dialect = "postgresql"
host = "⟪HOST⟫"
port = "5432"
database = "analytics"
username = "streamlit_ro"
password = "⟪S⟫\"""",
    ),
    (
        "toml_wrangler_vars_used_as_secret",
        C,
        "hex:64",
        """name = "edge-api"
main = "src/index.ts"
compatibility_date = "2024-11-01"

[vars]
ENVIRONMENT = "production"
SESSION_SIGNING_KEY = "⟪S⟫\"""",
    ),
    (
        "toml_influx_telegraf_output_token",
        C,
        "b64:64",
        """[[outputs.influxdb_v2]]
  urls = ["https://influx.acme.io:8086"]
  token = "⟪S⟫"
  organization = "acme"
  bucket = "telegraf\"""",
    ),
    (
        "yaml_spring_datasource_password",
        C,
        "pw",
        """spring:
  datasource:
    url: jdbc:postgresql://⟪HOST⟫:5432/orders
    username: orders_app
    password: ⟪S⟫
  jpa:
    hibernate:
      ddl-auto: validate""",
    ),
    (
        "yaml_rails_database_yml_production",
        C,
        "pw",
        """production:
  <<: *default
  database: storefront_production
  username: storefront
  password: '⟪S⟫'
  host: ⟪HOST⟫""",
    ),
    (
        "yaml_docker_compose_mariadb_root_password",
        C,
        "pw",
        """services:
  db:
    image: mariadb:11.4
    restart: unless-stopped
    environment:
      MARIADB_ROOT_PASSWORD: ⟪S⟫
      MARIADB_DATABASE: nextcloud
    volumes:
      - db:/var/lib/mysql""",
    ),
    (
        "yaml_k8s_secret_stringdata_smtp",
        C,
        "pw",
        """apiVersion: v1
kind: Secret
metadata:
  name: smtp-credentials
  namespace: notifications
type: Opaque
stringData:
  SMTP_USER: postmaster@mg.acme.io
  SMTP_PASSWORD: "⟪S⟫\"""",
    ),
    (
        "yaml_helm_values_redis_auth_password",
        C,
        "pw",
        """redis:
  architecture: replication
  auth:
    enabled: true
    password: "⟪S⟫"
  replica:
    replicaCount: 2""",
    ),
    (
        "yaml_ansible_group_vars_plain_become_and_db",
        C,
        "pw",
        """---
# group_vars/dbservers.yml
postgres_version: 16
postgres_replication_user: replicator
postgres_replication_password: ⟪S⟫
postgres_listen_addresses: "*\"""",
    ),
    (
        "yaml_github_actions_service_container_password",
        C,
        "pw",
        """    services:
      postgres:
        image: postgres:16
        env:
          POSTGRES_USER: ci
          POSTGRES_PASSWORD: ⟪S⟫
        ports: ["5432:5432"]""",
    ),
    (
        "yaml_gitlab_ci_variables_block_api_secret",
        C,
        "an:40",
        """variables:
  DOCKER_DRIVER: overlay2
  PARTNER_API_SECRET: "⟪S⟫"

deploy:
  stage: deploy
  script: ./deploy.sh""",
    ),
    (
        "yaml_netplan_wifi_password",
        C,
        "pw",
        """network:
  version: 2
  wifis:
    wlan0:
      dhcp4: true
      access-points:
        "ACME-Lab-5G":
          password: "⟪S⟫\"""",
    ),
    (
        "yaml_argocd_repo_creds_secret",
        C,
        "pw",
        """apiVersion: v1
kind: Secret
metadata:
  name: private-repo-creds
  labels:
    argocd.argoproj.io/secret-type: repo-creds
stringData:
  type: git
  url: https://git.acme.io/platform
  username: argocd
  password: ⟪S⟫""",
    ),
    (
        "yaml_prometheus_scrape_basic_auth_password",
        C,
        "pw",
        """scrape_configs:
  - job_name: node-edge
    scheme: https
    basic_auth:
      username: prom
      password: ⟪S⟫
    static_configs:
      - targets: ['edge-1.acme.io:9100']""",
    ),
    (
        "yaml_serverless_framework_environment_secret",
        C,
        "hex:48",
        """provider:
  name: aws
  runtime: nodejs20.x
  environment:
    STAGE: ${sls:stage}
    JWT_SECRET: ⟪S⟫""",
    ),
    (
        "json_vscode_sqltools_connection_password",
        C,
        "pw",
        """{
  "sqltools.connections": [
    {
      "previewLimit": 50,
      "server": "⟪HOST⟫",
      "port": 5432,
      "driver": "PostgreSQL",
      "name": "prod-readonly",
      "database": "app",
      "username": "readonly",
      "password": "⟪S⟫"
    }
  ]
}""",
    ),
    (
        "json_appsettings_connectionstrings_sqlserver",
        C,
        "pw",
        """{
  "ConnectionStrings": {
    "Default": "Server=⟪HOST⟫;Database=Inventory;User Id=inventory_app;Password=⟪S⟫;TrustServerCertificate=True"
  },
  "Logging": { "LogLevel": { "Default": "Information" } }
}""",
    ),
    (
        "json_composer_auth_http_basic",
        C,
        "pw",
        """{
    "http-basic": {
        "repo.packagist.com": {
            "username": "token",
            "password": "⟪S⟫"
        }
    }
}""",
    ),
    (
        "json_launch_json_env_db_password",
        C,
        "pw",
        """{
  "version": "0.2.0",
  "configurations": [
    {
      "type": "node",
      "request": "launch",
      "name": "API (prod data)",
      "program": "${workspaceFolder}/src/server.ts",
      "env": { "PGUSER": "app", "PGPASSWORD": "⟪S⟫" }
    }
  ]
}""",
    ),
    (
        "json_devcontainer_remote_env_token",
        C,
        "an:36",
        """{
  "name": "acme-dev",
  "image": "mcr.microsoft.com/devcontainers/python:3.12",
  "remoteEnv": {
    "INTERNAL_API_TOKEN": "⟪S⟫"
  }
}""",
    ),
    (
        "xml_maven_settings_server_password",
        C,
        "pw",
        """<settings>
  <servers>
    <server>
      <id>acme-releases</id>
      <username>deployer</username>
      <password>⟪S⟫</password>
    </server>
  </servers>
</settings>""",
    ),
    (
        "xml_tomcat_users_manager_password",
        C,
        "pw",
        """<tomcat-users xmlns="http://tomcat.apache.org/xml" version="1.0">
  <role rolename="manager-gui"/>
  <user username="tcadmin" password="⟪S⟫" roles="manager-gui,admin-gui"/>
</tomcat-users>""",
    ),
    (
        "xml_nuget_config_cleartext_password",
        C,
        "pw",
        """<configuration>
  <packageSourceCredentials>
    <AcmeFeed>
      <add key="Username" value="build" />
      <add key="ClearTextPassword" value="⟪S⟫" />
    </AcmeFeed>
  </packageSourceCredentials>
</configuration>""",
    ),
    (
        "xml_web_config_appsettings_secret",
        C,
        "an:44",
        """<appSettings>
  <add key="webpages:Version" value="3.0.0.0" />
  <add key="PaymentGateway.SharedSecret" value="⟪S⟫" />
</appSettings>""",
    ),
    (
        "xml_filezilla_sitemanager_pass",
        C,
        "pw",
        """<Server>
  <Host>ftp.acme-hosting.net</Host>
  <Port>21</Port>
  <Protocol>0</Protocol>
  <Type>0</Type>
  <User>acme_site</User>
  <Pass>⟪S⟫</Pass>
  <Name>production site</Name>
</Server>""",
    ),
    (
        "properties_kafka_sasl_jaas_password",
        C,
        "pw",
        """bootstrap.servers=kafka-1.acme.io:9093
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="etl" password="⟪S⟫";""",
    ),
    (
        "properties_quarkus_datasource_password",
        C,
        "pw",
        """quarkus.datasource.db-kind=postgresql
quarkus.datasource.username=quarkus
quarkus.datasource.password=⟪S⟫
quarkus.datasource.jdbc.url=jdbc:postgresql://⟪HOST⟫:5432/quarkus""",
    ),
    (
        "properties_liquibase_reference_password",
        C,
        "pw",
        """changeLogFile=db/changelog/db.changelog-master.yaml
url=jdbc:oracle:thin:@//⟪HOST⟫:1521/ORCLPDB1
username=LEDGER
password=⟪S⟫""",
    ),
    (
        "hcl_nomad_job_template_inline_secret",
        C,
        "pw",
        """task "api" {
  driver = "docker"
  template {
    data        = <<EOH
DB_PASSWORD=⟪S⟫
EOH
    destination = "secrets/app.env"
    env         = true
  }
}""",
    ),
    (
        "hcl_vault_provider_token_literal",
        C,
        "an:26",
        """provider "vault" {
  address = "https://vault.acme.io:8200"
  # TODO: switch to approle
  token   = "s.⟪S⟫"
}""",
    ),
    (
        "nginx_proxy_set_header_basic_upstream",
        C,
        "b64:24",
        """location /internal-metrics/ {
    proxy_pass http://10.0.3.12:9090/;
    proxy_set_header Authorization "Basic ⟪S⟫";
    allow 10.0.0.0/8;
    deny all;
}""",
    ),
    (
        "nginx_map_api_key_allowlist",
        C,
        "hex:32",
        """map $http_x_api_key $api_client {
    default "";
    "⟪S⟫" "partner-logistics";
}""",
    ),
    (
        "systemd_unit_environment_redis_password",
        C,
        "pw",
        """[Service]
Type=simple
User=queue
Environment="REDIS_URL=redis://default:⟪S⟫@127.0.0.1:6379/0"
ExecStart=/usr/local/bin/queue-worker --concurrency 8""",
    ),
    (
        "systemd_credential_setcredential_literal",
        C,
        "pw",
        """[Service]
ExecStart=/usr/bin/backup-agent
SetCredential=restic.password:⟪S⟫
LoadCredential=ssh.key:/etc/backup/id_ed25519""",
    ),
    (
        "env_file_with_export_and_quotes_django",
        C,
        "an:50",
        """export DJANGO_SETTINGS_MODULE=config.settings.prod
export DJANGO_SECRET_KEY='⟪S⟫'
export ALLOWED_HOSTS=acme.io,www.acme.io""",
    ),
    (
        "env_file_dotenv_vault_decrypted_keys",
        C,
        "pw",
        """# .env.production (decrypted with dotenvx)
DATABASE_HOST=⟪HOST⟫
DATABASE_USER=shop
DATABASE_PASSWORD=⟪S⟫
REDIS_HOST=cache.internal""",
    ),
    (
        "dockerfile_arg_default_npm_password",
        C,
        "pw",
        """FROM node:20-alpine
ARG NEXUS_USER=ci
ARG NEXUS_PASSWORD=⟪S⟫
RUN npm config set //nexus.acme.io/repository/npm/:_auth $(echo -n "$NEXUS_USER:$NEXUS_PASSWORD" | base64)""",
    ),
    (
        "k8s_pod_env_value_literal_token",
        C,
        "hex:40",
        """    containers:
      - name: exporter
        image: ghcr.io/acme/metrics-exporter:2.1
        env:
          - name: UPSTREAM_TOKEN
            value: "⟪S⟫\"""",
    ),
    (
        "helm_set_flag_admin_password_history",
        C,
        "pw",
        """helm upgrade --install keycloak bitnami/keycloak -n auth \\
  --set auth.adminUser=admin \\
  --set auth.adminPassword=⟪S⟫ \\
  --set postgresql.enabled=true""",
    ),
    (
        "ansible_inventory_ini_ssh_pass",
        C,
        "pw",
        """[legacy_switches]
sw-core-01 ansible_host=10.1.0.2
sw-core-02 ansible_host=10.1.0.3

[legacy_switches:vars]
ansible_user=netops
ansible_ssh_pass=⟪S⟫
ansible_network_os=ios""",
    ),
    (
        "ansible_task_mysql_user_password_literal",
        C,
        "pw",
        """- name: Create application DB user
  community.mysql.mysql_user:
    name: wiki
    password: "⟪S⟫"
    priv: "wiki.*:ALL"
    state: present""",
    ),
    (
        "puppet_hiera_common_yaml_plain_password",
        C,
        "pw",
        """---
profile::monitoring::zabbix_db_password: '⟪S⟫'
profile::monitoring::zabbix_server: 'zbx.acme.io'""",
    ),
    (
        "chef_data_bag_json_unencrypted",
        C,
        "pw",
        """{
  "id": "smtp",
  "relay_host": "smtp.acme.io",
  "user": "relay",
  "password": "⟪S⟫"
}""",
    ),
    (
        "haproxy_stats_auth_line",
        C,
        "pw",
        """listen stats
    bind *:8404
    stats enable
    stats uri /stats
    stats auth admin:⟪S⟫""",
    ),
    (
        "apache_htpasswd_plain_in_setup_script",
        C,
        "pw",
        """htpasswd -b -c /etc/apache2/.htpasswd staging ⟪S⟫
a2enmod auth_basic && systemctl reload apache2""",
    ),
    (
        "pgbouncer_userlist_plain_password",
        C,
        "pw",
        """; /etc/pgbouncer/userlist.txt
"app" "⟪S⟫"
"stats" "md5⟪hex:32⟫\"""",
    ),
    (
        "rabbitmq_conf_default_pass",
        C,
        "pw",
        """listeners.tcp.default = 5672
default_user = orders
default_pass = ⟪S⟫
management.tcp.port = 15672""",
    ),
    (
        "redis_conf_requirepass_directive",
        C,
        "pw",
        """bind 0.0.0.0
protected-mode yes
port 6379
requirepass ⟪S⟫
maxmemory 2gb""",
    ),
    (
        "mongod_keyfile_contents_in_compose_command",
        C,
        "b64:96",
        """    command: >
      bash -c "echo '⟪S⟫' > /etc/mongo-keyfile && chmod 400 /etc/mongo-keyfile &&
      mongod --replSet rs0 --keyFile /etc/mongo-keyfile --bind_ip_all\"""",
    ),
    (
        "postfix_sasl_passwd_map",
        C,
        "pw",
        """# /etc/postfix/sasl_passwd
[smtp.office365.com]:587 alerts@acme.io:⟪S⟫""",
    ),
    (
        "msmtprc_account_password",
        C,
        "pw",
        """account acme
host smtp.fastmail.com
port 465
tls on
tls_starttls off
auth on
user ⟪EMAIL⟫
password ⟪S⟫
from ⟪EMAIL⟫""",
    ),
    (
        "fetchmailrc_poll_password",
        C,
        "pw",
        """poll imap.acme.io protocol IMAP
  user "support@acme.io" there with password "⟪S⟫" is "support" here
  ssl fetchall""",
    ),
    (
        "wpa_supplicant_psk_plain",
        C,
        "pw",
        """ctrl_interface=DIR=/var/run/wpa_supplicant GROUP=netdev
country=DE
network={
    ssid="Werkstatt-IoT"
    psk="⟪S⟫"
    key_mgmt=WPA-PSK
}""",
    ),
    (
        "networkmanager_nmconnection_vpn_secret",
        C,
        "pw",
        """[connection]
id=office-vpn
type=vpn

[vpn]
gateway=vpn.acme.io
service-type=org.freedesktop.NetworkManager.openconnect

[vpn-secrets]
form:main:password=⟪S⟫""",
    ),
    (
        "openvpn_auth_user_pass_inline_file",
        C,
        "pw",
        """$ cat /etc/openvpn/client/credentials.txt
⟪USER⟫
⟪S⟫
$ sudo openvpn --config acme.ovpn --auth-user-pass /etc/openvpn/client/credentials.txt""",
    ),
    (
        "wireguard_private_key_in_wg0_conf",
        C,
        "b64:32",
        """[Interface]
Address = 10.66.0.5/32
PrivateKey = ⟪S⟫
DNS = 10.66.0.1

[Peer]
PublicKey = ⟪b64:32⟫
Endpoint = vpn.acme.io:51820
AllowedIPs = 10.0.0.0/8""",
    ),
    (
        "snmpd_conf_v3_auth_priv_passphrases",
        C,
        "pw",
        """createUser monitor SHA-256 "⟪S⟫" AES "⟪pw⟫"
rouser monitor priv""",
    ),
    (
        "samba_smb_credentials_file_for_fstab",
        C,
        "pw",
        """# /etc/fstab
//nas.acme.lan/scans  /mnt/scans  cifs  credentials=/root/.smbcred,uid=1000  0  0

# /root/.smbcred
username=scanner
password=⟪S⟫
domain=ACME""",
    ),
    (
        "rclone_conf_webdav_pass_plain_in_chat",
        C,
        "pw",
        """I wrote the Nextcloud remote by hand instead of with `rclone config`, so the password is not obscured:
[nextcloud]
type = webdav
url = https://cloud.acme.io/remote.php/dav/files/⟪USER⟫/
vendor = nextcloud
user = ⟪USER⟫
pass = ⟪S⟫""",
    ),
    (
        "gitconfig_http_extraheader_basic",
        C,
        "b64:30",
        """[http "https://git.acme.io/"]
	extraheader = AUTHORIZATION: basic ⟪S⟫
[user]
	name = ⟪USER⟫""",
    ),
    (
        "pip_conf_index_url_with_credentials",
        C,
        "pw",
        """[global]
index-url = https://ci-reader:⟪S⟫@pypi.acme.io/simple
timeout = 30""",
    ),
    (
        "npmrc_auth_base64_legacy_field",
        C,
        "b64:24",
        """registry=https://nexus.acme.io/repository/npm-group/
always-auth=true
_auth=⟪S⟫
email=⟪EMAIL⟫""",
    ),
    (
        "gradle_init_script_credentials_block",
        C,
        "pw",
        """allprojects {
    repositories {
        maven {
            url "https://nexus.acme.io/repository/maven-public/"
            credentials {
                username "gradle"
                password "⟪S⟫"
            }
        }
    }
}""",
    ),
    (
        "cargo_config_registry_token_custom",
        C,
        "an:32",
        """[registries.acme]
index = "sparse+https://cargo.acme.io/index/"
token = "Bearer ⟪S⟫\"""",
    ),
    (
        "conan_remote_login_in_ci_log",
        C,
        "pw",
        """+ conan remote login artifactory ci-conan -p ⟪S⟫
Changed user of remote 'artifactory' from 'None' (anonymous) to 'ci-conan' (authenticated)""",
    ),
    (
        "caddyfile_basicauth_plain_comment",
        C,
        "pw",
        """staging.acme.io {
	# user: preview / pass: ⟪S⟫ (hash below generated with caddy hash-password)
	basic_auth {
		preview $2a$14$⟪an:53⟫
	}
	reverse_proxy localhost:3000
}""",
    ),
    (
        "traefik_dynamic_yaml_forward_auth_secret",
        C,
        "hex:32",
        """http:
  middlewares:
    sso:
      forwardAuth:
        address: "http://oauth2-proxy:4180/oauth2/auth"
        authResponseHeaders: ["X-Auth-Request-User"]
# oauth2-proxy: OAUTH2_PROXY_COOKIE_SECRET=⟪S⟫""",
    ),
    (
        "grafana_ini_admin_password_security",
        C,
        "pw",
        """[security]
admin_user = admin
admin_password = ⟪S⟫
secret_key = SW2YcwTIb9zpOOhoPsMm""",
    ),
    (
        "minio_root_credentials_env",
        C,
        "pw",
        """MINIO_ROOT_USER=minioadmin-prod
MINIO_ROOT_PASSWORD=⟪S⟫
MINIO_VOLUMES="/mnt/data{1...4}\"""",
    ),
    (
        "jupyter_server_config_token_literal",
        C,
        "hex:48",
        """c.ServerApp.ip = '0.0.0.0'
c.ServerApp.open_browser = False
c.IdentityProvider.token = '⟪S⟫'""",
    ),
    (
        "zabbix_agent2_psk_file_echo",
        C,
        "hex:64",
        """echo "⟪S⟫" | sudo tee /etc/zabbix/zabbix_agent2.psk
sudo sed -i 's/^# TLSPSKIdentity=.*/TLSPSKIdentity=PSK-web-07/' /etc/zabbix/zabbix_agent2.conf""",
    ),
    (
        "ipsec_secrets_psk_line",
        C,
        "pw",
        """# /etc/ipsec.secrets
203.0.113.10 198.51.100.22 : PSK "⟪S⟫\"""",
    ),
    (
        "cisco_running_config_enable_secret_plain",
        C,
        "pw",
        """hostname edge-rtr-02
!
enable password ⟪S⟫
username netops privilege 15 secret 9 $9$⟪an:14⟫$⟪an:43⟫
!""",
    ),
    (
        "mikrotik_export_ppp_secret",
        C,
        "pw",
        """/ppp secret
add name=branch-07 password=⟪S⟫ profile=default-encryption service=l2tp""",
    ),
    (
        "bind_tsig_key_secret_named_conf",
        C,
        "b64:32",
        """key "ddns-update" {
    algorithm hmac-sha256;
    secret "⟪S⟫";
};""",
    ),
    (
        "logstash_pipeline_elasticsearch_password",
        C,
        "pw",
        """output {
  elasticsearch {
    hosts => ["https://es.acme.io:9200"]
    user => "logstash_writer"
    password => "⟪S⟫"
    index => "app-%{+YYYY.MM.dd}"
  }
}""",
    ),
    (
        "vector_toml_sink_auth_password",
        C,
        "pw",
        """[sinks.loki]
type = "loki"
inputs = ["app_logs"]
endpoint = "https://logs.acme.io"
auth.strategy = "basic"
auth.user = "vector"
auth.password = "⟪S⟫\"""",
    ),
    (
        "dbt_profiles_yml_snowflake_password",
        C,
        "pw",
        """analytics:
  target: prod
  outputs:
    prod:
      type: snowflake
      account: ab12345.eu-central-1
      user: DBT_PROD
      password: ⟪S⟫
      role: TRANSFORMER
      warehouse: TRANSFORMING""",
    ),
    (
        "airflow_connection_env_uri",
        C,
        "pw",
        """AIRFLOW_CONN_WAREHOUSE_DB='postgresql://airflow_etl:⟪S⟫@⟪HOST⟫:5432/warehouse'""",
    ),
]

# --------------------------------------------------------------------------
# CORPUS TABLE 3 -- connection strings / URLs / CLI invocations / shell history
# --------------------------------------------------------------------------
CORPUS += [
    (
        "conn_mongodb_srv_uri_in_mongosh_history",
        C,
        "pw",
        """mongosh "mongodb+srv://atlas_admin:⟪S⟫@cluster0.⟪lo:5⟫.mongodb.net/shop?retryWrites=true&w=majority\"""",
    ),
    (
        "conn_amqps_uri_in_celery_broker_setting",
        C,
        "pw",
        """CELERY_BROKER_URL = "amqps://celery:⟪S⟫@b-⟪uuid⟫.mq.eu-west-1.amazonaws.com:5671/prod\"""",
    ),
    (
        "conn_rediss_uri_with_username_in_sidekiq",
        C,
        "pw",
        """Sidekiq.configure_server do |config|
  config.redis = { url: "rediss://sidekiq:⟪S⟫@cache.acme.io:6380/2" }
end""",
    ),
    (
        "conn_jdbc_sqlserver_password_param",
        C,
        "pw",
        """jdbc:sqlserver://⟪HOST⟫:1433;databaseName=Payroll;user=payroll_svc;password=⟪S⟫;encrypt=true;trustServerCertificate=false""",
    ),
    (
        "conn_oracle_ezconnect_sqlplus",
        C,
        "pw",
        """$ sqlplus hr/⟪S⟫@//⟪HOST⟫:1521/FREEPDB1

SQL*Plus: Release 23.0.0.0.0 - Production""",
    ),
    (
        "conn_clickhouse_http_url_password_param",
        C,
        "pw",
        """curl 'https://ch.acme.io:8443/?user=analyst&password=⟪S⟫' --data-binary 'SELECT count() FROM events WHERE date = today()'""",
    ),
    (
        "conn_ldap_uri_bind_in_python_ldap3",
        C,
        "pw",
        """server = Server("ldaps://dc01.corp.acme.io", get_info=ALL)
conn = Connection(server, user="CN=svc-sync,OU=Service Accounts,DC=corp,DC=acme,DC=io", password="⟪S⟫", auto_bind=True)""",
    ),
    (
        "conn_smtp_url_in_grafana_env",
        C,
        "pw",
        """GF_SMTP_ENABLED=true
GF_SMTP_HOST=smtp.eu.mailgun.org:587
GF_SMTP_USER=grafana@mg.acme.io
GF_SMTP_PASSWORD=⟪S⟫""",
    ),
    (
        "conn_ftp_url_in_wget_mirror",
        C,
        "pw",
        """wget --mirror --no-parent "ftp://exports:⟪S⟫@ftp.partner-logistics.com/outgoing/"
""",
    ),
    (
        "conn_sftp_url_in_lftp_command",
        C,
        "pw",
        """lftp -e 'mirror -R ./build /var/www/html; bye' sftp://deploy:⟪S⟫@web01.acme-hosting.net""",
    ),
    (
        "conn_elasticsearch_url_in_kibana_log",
        C,
        "pw",
        """[⟪DATE⟫T⟪TIME⟫.402+00:00][ERROR][elasticsearch-service] Unable to retrieve version information from Elasticsearch nodes. connect ECONNREFUSED https://kibana_system:⟪S⟫@es01:9200/""",
    ),
    (
        "conn_nats_url_with_credentials",
        C,
        "pw",
        """nc, err := nats.Connect("nats://orders:⟪S⟫@nats.acme.internal:4222")""",
    ),
    (
        "conn_mqtt_url_in_zigbee2mqtt_config",
        C,
        "pw",
        """mqtt:
  base_topic: zigbee2mqtt
  server: mqtt://192.168.1.10:1883
  user: z2m
  password: ⟪S⟫""",
    ),
    (
        "conn_neo4j_uri_auth_tuple_python",
        C,
        "pw",
        """driver = GraphDatabase.driver("neo4j+s://⟪hex:8⟫.databases.neo4j.io", auth=("neo4j", "⟪S⟫"))""",
    ),
    (
        "conn_cassandra_cqlsh_flags",
        C,
        "pw",
        """cqlsh cass-1.acme.io 9042 -u cassandra_admin -p '⟪S⟫' --ssl -e "DESCRIBE KEYSPACES\"""",
    ),
    (
        "conn_snowflake_sqlalchemy_url",
        C,
        "pw",
        """engine = create_engine("snowflake://LOADER:⟪S⟫@ab12345.eu-central-1/RAW/PUBLIC?warehouse=LOADING&role=LOADER")""",
    ),
    (
        "conn_git_remote_https_with_app_password",
        C,
        "pw",
        """$ git remote -v
origin	https://⟪USER⟫:⟪S⟫@git.acme.io/platform/⟪PROJ⟫.git (fetch)
origin	https://⟪USER⟫:⟪S⟫@git.acme.io/platform/⟪PROJ⟫.git (push)""",
    ),
    (
        "conn_rsync_password_env_daemon",
        C,
        "pw",
        """RSYNC_PASSWORD=⟪S⟫ rsync -av --delete ./public/ rsync://mirror@mirror.acme.io/site/""",
    ),
    (
        "cli_mysql_p_flag_no_space",
        C,
        "pw",
        """ 1187  mysql -h ⟪HOST⟫ -u root -p⟪S⟫ -e "SHOW PROCESSLIST"
 1188  exit""",
    ),
    (
        "cli_pg_dump_pgpassword_inline",
        C,
        "pw",
        """PGPASSWORD='⟪S⟫' pg_dump -h ⟪HOST⟫ -U ledger -Fc ledger > ledger_$(date +%F).dump""",
    ),
    (
        "cli_curl_u_user_colon_pass_jenkins",
        C,
        "pw",
        """curl -X POST -u ⟪USER⟫:⟪S⟫ "https://jenkins.acme.io/job/⟪PROJ⟫/buildWithParameters?BRANCH=main\"""",
    ),
    (
        "cli_curl_header_x_api_key_partner",
        C,
        "hex:40",
        """curl -s https://api.partner-logistics.com/v3/shipments/⟪N⟫ -H "X-Api-Key: ⟪S⟫" | jq .""",
    ),
    (
        "cli_httpie_auth_flag",
        C,
        "pw",
        """http --auth admin:⟪S⟫ PUT https://es.acme.io:9200/_cluster/settings persistent:='{"action.auto_create_index":"false"}'""",
    ),
    (
        "cli_sshpass_p_in_deploy_script",
        C,
        "pw",
        """for h in web01 web02 web03; do
  sshpass -p '⟪S⟫' ssh -o StrictHostKeyChecking=no deploy@$h 'sudo systemctl restart app'
done""",
    ),
    (
        "cli_smbclient_percent_password",
        C,
        "pw",
        """smbclient //fs01.corp.acme.io/Finance -U 'CORP\\⟪USER⟫%⟪S⟫' -c 'ls'""",
    ),
    (
        "cli_rdesktop_xfreerdp_p_flag",
        C,
        "pw",
        """xfreerdp /v:10.20.0.15 /u:Administrator /p:'⟪S⟫' /cert:ignore /dynamic-resolution""",
    ),
    (
        "cli_mongodump_password_flag",
        C,
        "pw",
        """mongodump --host ⟪HOST⟫ --port 27017 --username backup --password ⟪S⟫ --authenticationDatabase admin --gzip --archive=/backups/mongo.gz""",
    ),
    (
        "cli_redis_cli_a_flag",
        C,
        "pw",
        """$ redis-cli -h cache.acme.io -a ⟪S⟫ --no-auth-warning INFO replication
# Replication
role:master""",
    ),
    (
        "cli_docker_run_e_postgres_password",
        C,
        "pw",
        """docker run -d --name pg16 -e POSTGRES_PASSWORD=⟪S⟫ -p 5432:5432 -v pgdata:/var/lib/postgresql/data postgres:16""",
    ),
    (
        "cli_kubectl_create_secret_from_literal_db",
        C,
        "pw",
        """kubectl create secret generic db-creds -n payments \\
  --from-literal=username=payments \\
  --from-literal=password='⟪S⟫'""",
    ),
    (
        "cli_az_sql_server_create_admin_password",
        C,
        "pw",
        """az sql server create --name acme-sql-weu --resource-group rg-data \\
  --location westeurope --admin-user sqladmin --admin-password '⟪S⟫'""",
    ),
    (
        "cli_gcloud_sql_users_set_password",
        C,
        "pw",
        """gcloud sql users set-password app --instance=orders-pg --password='⟪S⟫' --project=acme-prod""",
    ),
    (
        "cli_aws_configure_set_secret",
        C,
        "awssec",
        """aws configure set aws_access_key_id ⟪akia⟫ --profile ci
aws configure set aws_secret_access_key ⟪S⟫ --profile ci
aws configure set region eu-west-1 --profile ci""",
    ),
    (
        "cli_openssl_pkcs12_passout_pass",
        C,
        "pw",
        """openssl pkcs12 -export -in server.crt -inkey server.key -out server.p12 -name acme -passout pass:⟪S⟫""",
    ),
    (
        "cli_keytool_storepass_keypass",
        C,
        "pw",
        """keytool -genkeypair -alias upload -keyalg RSA -keysize 2048 -validity 10000 \\
  -keystore upload.jks -storepass ⟪S⟫ -keypass ⟪S⟫ -dname "CN=Acme Mobile, O=Acme, C=NL\"""",
    ),
    (
        "cli_zip_capital_p_flag_encrypted_backup",
        C,
        "pw",
        """zip -r -P ⟪S⟫ customer_export_⟪DATE⟫.zip exports/customers/""",
    ),
    (
        "cli_gpg_batch_passphrase_flag",
        C,
        "pw",
        """gpg --batch --yes --pinentry-mode loopback --passphrase '⟪S⟫' -d secrets.tar.gz.gpg | tar xz""",
    ),
    (
        "cli_restic_password_env_inline",
        C,
        "pw",
        """RESTIC_PASSWORD='⟪S⟫' restic -r s3:s3.eu-central-1.amazonaws.com/acme-restic backup /srv --exclude-caches""",
    ),
    (
        "cli_vault_kv_put_inline_value",
        C,
        "pw",
        """vault kv put secret/prod/billing db_user=billing db_password='⟪S⟫'""",
    ),
    (
        "cli_gh_secret_set_body_flag",
        C,
        "an:40",
        """gh secret set PARTNER_API_KEY --repo acme/⟪PROJ⟫ --body "⟪S⟫\"""",
    ),
    (
        "cli_heroku_config_set_secret",
        C,
        "hex:64",
        """$ heroku config:set SESSION_SECRET=⟪S⟫ -a acme-storefront
Setting SESSION_SECRET and restarting ⬢ acme-storefront... done, v213""",
    ),
    (
        "cli_vercel_env_add_echo_pipe",
        C,
        "pw",
        """echo -n '⟪S⟫' | vercel env add DB_PASSWORD production""",
    ),
    (
        "cli_psql_conninfo_password_keyword",
        C,
        "pw",
        """psql "host=⟪HOST⟫ port=5432 dbname=reporting user=metabase password=⟪S⟫ sslmode=require\"""",
    ),
    (
        "cli_mssql_sqlcmd_capital_p_flag",
        C,
        "pw",
        """sqlcmd -S tcp:⟪HOST⟫,1433 -U sa -P '⟪S⟫' -Q "SELECT name FROM sys.databases\"""",
    ),
    (
        "cli_ipmitool_lanplus_capital_p",
        C,
        "pw",
        """ipmitool -I lanplus -H 10.9.0.21 -U ADMIN -P ⟪S⟫ chassis power cycle""",
    ),
    (
        "cli_net_use_windows_share",
        C,
        "pw",
        """C:\\> net use Z: \\\\fs02\\builds /user:CORP\\buildsvc ⟪S⟫ /persistent:no
The command completed successfully.""",
    ),
    (
        "cli_powershell_convertto_securestring_plain",
        C,
        "pw",
        """$pw = ConvertTo-SecureString '⟪S⟫' -AsPlainText -Force
$cred = New-Object System.Management.Automation.PSCredential('CORP\\svc-deploy', $pw)
Invoke-Command -ComputerName app01 -Credential $cred -ScriptBlock { Restart-Service W3SVC }""",
    ),
    (
        "cli_ldapsearch_w_flag",
        C,
        "pw",
        """ldapsearch -H ldaps://ldap.acme.io -D "uid=reader,ou=system,dc=acme,dc=io" -w '⟪S⟫' -b "ou=people,dc=acme,dc=io" "(mail=*@acme.io)" cn mail""",
    ),
    (
        "cli_mosquitto_pub_capital_p_flag",
        C,
        "pw",
        """mosquitto_pub -h mqtt.acme.io -p 8883 --capath /etc/ssl/certs -u sensor-gw -P ⟪S⟫ -t plant/line3/temp -m 21.4""",
    ),
    (
        "cli_openconnect_passwd_on_stdin_echo",
        C,
        "pw",
        """echo '⟪S⟫' | sudo openconnect --user=⟪USER⟫ --passwd-on-stdin vpn.acme.io""",
    ),
    (
        "cli_java_jar_spring_password_arg",
        C,
        "pw",
        """java -jar build/libs/orders-1.8.2.jar --spring.profiles.active=prod --spring.datasource.password=⟪S⟫""",
    ),
    (
        "cli_terraform_apply_var_flag_password",
        C,
        "pw",
        """terraform apply -var="db_password=⟪S⟫" -var-file=prod.tfvars -auto-approve""",
    ),
    (
        "cli_ansible_playbook_extra_vars_password",
        C,
        "pw",
        """ansible-playbook site.yml -i inventories/prod -e "ansible_become_password=⟪S⟫" --limit web""",
    ),
    (
        "cli_skopeo_creds_flag",
        C,
        "pw",
        """skopeo copy --src-creds ⟪USER⟫:⟪S⟫ docker://registry.acme.io/base/python:3.12 docker://ghcr.io/acme/python:3.12""",
    ),
]

# --------------------------------------------------------------------------
# CORPUS TABLE 4 -- source code, logs, SQL, commits, cloud credential files
# --------------------------------------------------------------------------
CORPUS += [
    (
        "python_dataclass_default_password_field",
        C,
        "pw",
        """@dataclass
class SmtpSettings:
    host: str = "smtp.acme.io"
    port: int = 587
    username: str = "notifier"
    password: str = "⟪S⟫\"""",
    ),
    (
        "python_requests_auth_tuple_literal",
        C,
        "pw",
        """resp = requests.get(
    "https://nexus.acme.io/service/rest/v1/components?repository=pypi-internal",
    auth=("nexus-reader", "⟪S⟫"),
    timeout=10,
)""",
    ),
    (
        "python_hmac_webhook_secret_bytes_literal",
        C,
        "hex:40",
        """WEBHOOK_SECRET = b"⟪S⟫"

def verify(body: bytes, signature: str) -> bool:
    mac = hmac.new(WEBHOOK_SECRET, body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(mac, signature)""",
    ),
    (
        "javascript_mysql2_pool_password",
        C,
        "pw",
        """const pool = mysql.createPool({
  host: '⟪HOST⟫',
  user: 'shop',
  password: '⟪S⟫',
  database: 'shop',
  connectionLimit: 10,
});""",
    ),
    (
        "typescript_nextauth_secret_literal",
        C,
        "b64:32",
        """export const authOptions: NextAuthOptions = {
  providers: [GitHubProvider({ clientId: process.env.GITHUB_ID!, clientSecret: process.env.GITHUB_SECRET! })],
  secret: "⟪S⟫",
  session: { strategy: "jwt" },
};""",
    ),
    (
        "go_sql_open_dsn_with_password",
        C,
        "pw",
        """db, err := sql.Open("mysql", "inventory:⟪S⟫@tcp(⟪HOST⟫:3306)/inventory?parseTime=true")
if err != nil {
	log.Fatal(err)
}""",
    ),
    (
        "go_const_jwt_signing_key",
        C,
        "an:48",
        """package auth

const jwtSigningKey = "⟪S⟫"

func Sign(claims jwt.MapClaims) (string, error) {
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(jwtSigningKey))
}""",
    ),
    (
        "java_static_final_keystore_password",
        C,
        "pw",
        """public final class TlsConfig {
    private static final String KEYSTORE_PATH = "/etc/acme/keystore.p12";
    private static final char[] KEYSTORE_PASSWORD = "⟪S⟫".toCharArray();
}""",
    ),
    (
        "kotlin_companion_object_api_secret",
        C,
        "hex:32",
        """class PartnerClient(private val http: OkHttpClient) {
    companion object {
        private const val BASE_URL = "https://api.partner.io/v2/"
        private const val API_SECRET = "⟪S⟫"
    }
}""",
    ),
    (
        "csharp_sqlconnection_string_literal",
        C,
        "pw",
        """using var conn = new SqlConnection("Data Source=⟪HOST⟫;Initial Catalog=Crm;User ID=crm_web;Password=⟪S⟫;");
await conn.OpenAsync();""",
    ),
    (
        "csharp_networkcredential_ctor",
        C,
        "pw",
        """var smtp = new SmtpClient("smtp.office365.com", 587)
{
    EnableSsl = true,
    Credentials = new NetworkCredential("reports@acme.io", "⟪S⟫")
};""",
    ),
    (
        "ruby_net_smtp_start_password",
        C,
        "pw",
        """Net::SMTP.start('smtp.acme.io', 587, 'acme.io', 'invoices@acme.io', '⟪S⟫', :login) do |smtp|
  smtp.send_message(msg, 'invoices@acme.io', customer_email)
end""",
    ),
    (
        "php_pdo_constructor_password",
        C,
        "pw",
        """$pdo = new PDO('pgsql:host=⟪HOST⟫;dbname=crm', 'crm_app', '⟪S⟫', [
    PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
]);""",
    ),
    (
        "php_wp_config_define_db_password",
        C,
        "pw",
        """define( 'DB_NAME', 'wp_acme' );
define( 'DB_USER', 'wp_acme' );
define( 'DB_PASSWORD', '⟪S⟫' );
define( 'DB_HOST', 'localhost' );""",
    ),
    (
        "rust_const_str_admin_token",
        C,
        "an:40",
        """const ADMIN_TOKEN: &str = "⟪S⟫";

async fn require_admin(req: &HttpRequest) -> bool {
    req.headers().get("x-admin-token").map(|v| v == ADMIN_TOKEN).unwrap_or(false)
}""",
    ),
    (
        "swift_let_api_secret_in_struct",
        C,
        "an:32",
        """struct BackendConfig {
    static let baseURL = URL(string: "https://api.acme.io")!
    static let clientSecret = "⟪S⟫"
}""",
    ),
    (
        "scala_config_factory_override_password",
        C,
        "pw",
        """val config = ConfigFactory.parseString(
  \"\"\"slick.dbs.default.db.password = "⟪S⟫"\"\"\"
).withFallback(ConfigFactory.load())""",
    ),
    (
        "elixir_runtime_exs_repo_password",
        C,
        "pw",
        """config :shop, Shop.Repo,
  username: "shop",
  password: "⟪S⟫",
  hostname: "⟪HOST⟫",
  pool_size: 10""",
    ),
    (
        "lua_openresty_redis_auth_call",
        C,
        "pw",
        """local red = redis:new()
red:set_timeouts(1000, 1000, 1000)
local ok, err = red:connect("10.0.5.9", 6379)
local res, err = red:auth("⟪S⟫")""",
    ),
    (
        "r_dbconnect_password_argument",
        C,
        "pw",
        """con <- DBI::dbConnect(RPostgres::Postgres(),
  host = "⟪HOST⟫", dbname = "research",
  user = "analyst", password = "⟪S⟫")""",
    ),
    (
        "bash_function_local_password_var",
        C,
        "pw",
        """backup_db() {
  local db_user="backup"
  local db_pass="⟪S⟫"
  mysqldump -u"$db_user" -p"$db_pass" --all-databases | gzip > "/backups/all-$(date +%F).sql.gz"
}""",
    ),
    (
        "powershell_hashtable_api_key_header",
        C,
        "hex:32",
        """$headers = @{ 'X-Auth-Token' = '⟪S⟫'; 'Accept' = 'application/json' }
Invoke-RestMethod -Uri 'https://cmdb.acme.io/api/assets' -Headers $headers""",
    ),
    (
        "c_define_wifi_password_esp_idf",
        C,
        "pw",
        """#define EXAMPLE_ESP_WIFI_SSID      "Acme-Factory"
#define EXAMPLE_ESP_WIFI_PASS      "⟪S⟫"
#define EXAMPLE_ESP_MAXIMUM_RETRY  5""",
    ),
    (
        "haskell_connectinfo_record_password",
        C,
        "pw",
        """connInfo :: ConnectInfo
connInfo = defaultConnectInfo
  { connectHost = "⟪HOST⟫"
  , connectUser = "ledger"
  , connectPassword = "⟪S⟫"
  , connectDatabase = "ledger" }""",
    ),
    (
        "sql_alter_role_postgres_password",
        C,
        "pw",
        """ALTER ROLE app_writer WITH LOGIN PASSWORD '⟪S⟫' VALID UNTIL '2026-01-01';""",
    ),
    (
        "sql_mssql_create_login_with_password",
        C,
        "pw",
        """CREATE LOGIN etl_loader WITH PASSWORD = N'⟪S⟫', CHECK_POLICY = OFF;
CREATE USER etl_loader FOR LOGIN etl_loader;""",
    ),
    (
        "sql_update_users_set_plain_password_fixture",
        C,
        "pw",
        """-- reset the support account on staging after the import
UPDATE users SET password = '⟪S⟫', must_change = false WHERE email = 'support@acme.io';""",
    ),
    (
        "sql_create_database_link_oracle",
        C,
        "pw",
        """CREATE DATABASE LINK finance_link CONNECT TO fin_ro IDENTIFIED BY "⟪S⟫" USING 'FINPROD';""",
    ),
    (
        "log_python_traceback_with_dsn_in_exception",
        C,
        "pw",
        """Traceback (most recent call last):
  File "/app/worker.py", line 42, in <module>
    conn = psycopg2.connect(dsn)
  File "/usr/local/lib/python3.12/site-packages/psycopg2/__init__.py", line 122, in connect
    conn = _connect(dsn, connection_factory=connection_factory, **kwasync)
psycopg2.OperationalError: could not connect to server: Connection timed out
	Is the server running on host "⟪HOST⟫" (dsn="host=⟪HOST⟫ user=worker password=⟪S⟫ dbname=jobs")""",
    ),
    (
        "log_java_exception_with_jdbc_url_password",
        C,
        "pw",
        """org.springframework.jdbc.CannotGetJdbcConnectionException: Failed to obtain JDBC Connection; nested exception is java.sql.SQLException: Access denied for user 'orders'@'10.0.4.22'
	url=jdbc:mysql://⟪HOST⟫:3306/orders?user=orders&password=⟪S⟫&useSSL=true
	at org.springframework.jdbc.datasource.DataSourceUtils.getConnection(DataSourceUtils.java:83)""",
    ),
    (
        "log_nodejs_axios_error_config_dump",
        C,
        "hex:32",
        """AxiosError: Request failed with status code 401
    at settle (/app/node_modules/axios/lib/core/settle.js:19:12)
  config: {
    url: 'https://api.partner.io/v1/orders',
    method: 'get',
    headers: { Accept: 'application/json', 'X-Partner-Secret': '⟪S⟫' },
    timeout: 5000
  }""",
    ),
    (
        "log_nginx_access_log_token_query_param",
        C,
        "an:40",
        """10.0.2.15 - - [12/Mar/2025:09:14:22 +0000] "GET /export/report.csv?access_token=⟪S⟫&from=2025-03-01 HTTP/1.1" 200 18422 "-" "python-requests/2.32.3\"""",
    ),
    (
        "log_docker_inspect_env_array",
        C,
        "pw",
        """$ docker inspect billing-worker --format '{{json .Config.Env}}'
["PATH=/usr/local/sbin:/usr/local/bin","DB_HOST=⟪HOST⟫","DB_PASSWORD=⟪S⟫","NODE_ENV=production"]""",
    ),
    (
        "log_set_x_trace_in_ci_with_password",
        C,
        "pw",
        """+ export REGISTRY_USER=ci-bot
+ REGISTRY_USER=ci-bot
+ export REGISTRY_PASS=⟪S⟫
+ REGISTRY_PASS=⟪S⟫
+ docker login registry.acme.io -u ci-bot --password-stdin""",
    ),
    (
        "log_ruby_rails_params_unfiltered",
        C,
        "pw",
        """Started POST "/admin/session" for 10.0.0.7 at ⟪DATE⟫ ⟪TIME⟫ +0000
Processing by Admin::SessionsController#create as HTML
  Parameters: {"authenticity_token"=>"[FILTERED]", "user"=>{"email"=>"ops@acme.io", "pass"=>"⟪S⟫"}, "commit"=>"Sign in"}""",
    ),
    (
        "log_kubectl_describe_pod_env_literal",
        C,
        "pw",
        """    Environment:
      SPRING_PROFILES_ACTIVE:     prod
      SPRING_DATASOURCE_URL:      jdbc:postgresql://⟪HOST⟫:5432/orders
      SPRING_DATASOURCE_PASSWORD: ⟪S⟫
    Mounts:
      /var/run/secrets/kubernetes.io/serviceaccount from kube-api-access-⟪lo:5⟫ (ro)""",
    ),
    (
        "log_php_pdoexception_stack_args",
        C,
        "pw",
        """PHP Fatal error:  Uncaught PDOException: SQLSTATE[HY000] [2002] Connection refused in /var/www/html/lib/db.php:12
Stack trace:
#0 /var/www/html/lib/db.php(12): PDO->__construct('mysql:host=db;d...', 'shop', '⟪S⟫')
#1 /var/www/html/index.php(5): Db::connect()""",
    ),
    (
        "log_terraform_debug_provider_password_attr",
        C,
        "pw",
        """⟪DATE⟫T⟪TIME⟫.451Z [DEBUG] provider.terraform-provider-postgresql_v1.22.0: 2025/01/14 10:22:31 [DEBUG] PostgreSQL config: host=⟪HOST⟫ user=tf_admin password=⟪S⟫ sslmode=require""",
    ),
    (
        "commit_message_body_mentions_new_password",
        C,
        "pw",
        """commit ⟪SHA⟫
Author: ⟪USER⟫ <⟪EMAIL⟫>
Date:   Tue Mar 4 10:12:44 2025 +0100

    chore(staging): rotate shared admin login

    New staging admin password is ⟪S⟫ -- old one was posted in #general.""",
    ),
    (
        "commit_trailer_like_line_with_token",
        C,
        "hex:40",
        """fix(sync): retry on 429 from partner API

Backoff now respects Retry-After.

Tested-with: PARTNER_TOKEN=⟪S⟫
Signed-off-by: ⟪USER⟫ <⟪EMAIL⟫>""",
    ),
    (
        "commit_diff_adds_password_line",
        C,
        "pw",
        """diff --git a/config/settings/local.py b/config/settings/local.py
index ⟪SHORT⟫..⟪SHORT2⟫ 100644
--- a/config/settings/local.py
+++ b/config/settings/local.py
@@ -12,7 +12,7 @@ DATABASES = {
         "USER": "shop",
-        "PASSWORD": os.environ["DB_PASSWORD"],
+        "PASSWORD": "⟪S⟫",
         "HOST": "⟪HOST⟫",""",
    ),
    (
        "commit_revert_message_quotes_leaked_key",
        C,
        "hex:32",
        """Revert "add mapping service key"

This reverts commit ⟪SHA⟫.
The key ⟪S⟫ was committed in plain text; it has been revoked in the partner portal.""",
    ),
    (
        "git_stash_show_patch_with_secret",
        C,
        "an:40",
        """$ git stash show -p stash@{0}
--- a/.env
+++ b/.env
@@ -3 +3 @@
-ANALYTICS_WRITE_KEY=
+ANALYTICS_WRITE_KEY=⟪S⟫""",
    ),
    (
        "cloud_aws_credentials_file_named_profile",
        C,
        "awssec",
        """[default]
region = eu-west-1

[profile-ledger-prod]
aws_access_key_id = ⟪akia⟫
aws_secret_access_key = ⟪S⟫""",
    ),
    (
        "cloud_aws_sso_cache_json_access_token",
        C,
        "b64u:160",
        """{"startUrl": "https://acme.awsapps.com/start", "region": "eu-west-1", "accessToken": "aoa⟪S⟫", "expiresAt": "⟪DATE⟫T18:22:10Z"}""",
    ),
    (
        "cloud_gcp_adc_authorized_user_refresh",
        C,
        "b64u:72",
        """{
  "account": "",
  "client_id": "⟪dig:12⟫-⟪lo:32⟫.apps.googleusercontent.com",
  "client_secret": "d-FL95Q19q7MQmFpd7hHD0Ty",
  "quota_project_id": "acme-dev",
  "refresh_token": "1//09⟪S⟫",
  "type": "authorized_user"
}""",
    ),
    (
        "cloud_azure_storage_account_key_in_azcopy_env",
        C,
        "b64:64",
        """export AZURE_STORAGE_ACCOUNT=acmebackupsweu
export AZURE_STORAGE_KEY=⟪S⟫
az storage blob upload-batch -d nightly -s ./dumps""",
    ),
    (
        "cloud_alibaba_aliyun_cli_config_json",
        C,
        "an:30",
        """{
  "current": "default",
  "profiles": [
    { "name": "default", "mode": "AK", "access_key_id": "⟪alibaba_id⟫", "access_key_secret": "⟪S⟫", "region_id": "cn-hangzhou" }
  ]
}""",
    ),
    (
        "cloud_tencent_tccli_credential_file",
        C,
        "an:32",
        """{
    "secretId": "⟪tencent_id⟫",
    "secretKey": "⟪S⟫"
}""",
    ),
    (
        "cloud_oci_config_pass_phrase",
        C,
        "pw",
        """[DEFAULT]
user=ocid1.user.oc1..aaaaaaaa⟪lo:52⟫
fingerprint=⟪hex:2⟫:⟪hex:2⟫:⟪hex:2⟫:⟪hex:2⟫:⟪hex:2⟫:⟪hex:2⟫:⟪hex:2⟫:⟪hex:2⟫:⟪hex:2⟫:⟪hex:2⟫:⟪hex:2⟫:⟪hex:2⟫:⟪hex:2⟫:⟪hex:2⟫:⟪hex:2⟫:⟪hex:2⟫
key_file=~/.oci/oci_api_key.pem
pass_phrase=⟪S⟫
tenancy=ocid1.tenancy.oc1..aaaaaaaa⟪lo:52⟫
region=eu-frankfurt-1""",
    ),
    (
        "cloud_ibm_cloud_api_key_json",
        C,
        "b64u:33",
        """{
  "name": "ci-deployer",
  "description": "used by the tekton pipeline",
  "createdAt": "⟪DATE⟫T09:13+0000",
  "apikey": "⟪S⟫"
}""",
    ),
    (
        "cloud_scaleway_config_yaml_secret_key",
        C,
        "uuid",
        """access_key: SCW⟪up:17⟫
secret_key: ⟪S⟫
default_organization_id: ⟪uuid2⟫
default_region: fr-par""",
    ),
    (
        "cloud_hetzner_hcloud_cli_toml",
        C,
        "an:64",
        """active_context = "prod"

[[contexts]]
  name = "prod"
  token = "⟪S⟫\"""",
    ),
    (
        "cloud_cloudflare_api_token_in_certbot_ini",
        C,
        "b64u:30",
        """# /etc/letsencrypt/cloudflare.ini
dns_cloudflare_api_token = ⟪S⟫""",
    ),
    (
        "cloud_datadog_api_key_in_agent_yaml",
        C,
        "hex:32",
        """api_key: ⟪S⟫
site: datadoghq.eu
logs_enabled: true
apm_config:
  enabled: true""",
    ),
    (
        "cloud_algolia_admin_key_in_indexer_script",
        C,
        "hex:32",
        """const client = algoliasearch('⟪up:10⟫', '⟪S⟫'); // admin key, needed to push records
const index = client.initIndex('products_prod');
await index.saveObjects(records, { autoGenerateObjectIDIfNotExist: true });""",
    ),
    (
        "cloud_twilio_auth_token_in_python_client",
        C,
        "hex:32",
        """account_sid = "AC⟪hex:32⟫"
auth_token = "⟪S⟫"
client = Client(account_sid, auth_token)""",
    ),
    (
        "cloud_okta_ssws_token_header",
        C,
        "b64u:30",
        """curl -s -H "Authorization: SSWS 00⟪S⟫" "https://acme.okta.com/api/v1/users?limit=200\"""",
    ),
    (
        "cloud_confluent_cluster_api_secret_properties",
        C,
        "b64:48",
        """sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username='⟪up:16⟫' password='⟪S⟫';
bootstrap.servers=pkc-⟪lo:5⟫.eu-west-1.aws.confluent.cloud:9092""",
    ),
    (
        "cloud_binance_secret_in_ccxt_config",
        C,
        "an:64",
        """exchange = ccxt.binance({
    "apiKey": "⟪an:64⟫",
    "secret": "⟪S⟫",
    "enableRateLimit": True,
})""",
    ),
    (
        "cloud_wechat_appsecret_in_miniprogram_server",
        C,
        "hex:32",
        """WECHAT_APPID=wx⟪hex:16⟫
WECHAT_APPSECRET=⟪S⟫""",
    ),
    (
        "cloud_dingtalk_robot_sign_secret",
        C,
        "hex:64",
        """webhook = "https://oapi.dingtalk.com/robot/send?access_token=⟪hex:64⟫"
secret = "SEC⟪S⟫"
timestamp = str(round(time.time() * 1000))""",
    ),
]

# --------------------------------------------------------------------------
# CORPUS TABLE 5 -- chat / session prose in many natural languages
# --------------------------------------------------------------------------
CORPUS += [
    (
        "french_commit_note_wiki_admin_password",
        C,
        "pw",
        """Note de session : j'ai réinitialisé le compte administrateur du wiki interne. Le nouveau mot de passe est ⟪S⟫ — à changer à la première connexion.""",
    ),
    (
        "german_agent_handover_jenkins_token",
        C,
        "hex:34",
        """Übergabe für morgen: Der Jenkins-Build hängt am Schritt „publish“. Ich habe dafür ein API-Token für den Benutzer ci-bot angelegt: ⟪S⟫ (bitte nicht ins Repo committen).""",
    ),
    (
        "spanish_whatsapp_export_router_clave",
        C,
        "pw",
        """[⟪DATE⟫ 09:41] Lucía: oye, ¿cuál era la clave del router de la oficina?
[⟪DATE⟫ 09:43] Andrés: usuario admin y la clave es ⟪S⟫
[⟪DATE⟫ 09:43] Lucía: gracias!!""",
    ),
    (
        "portuguese_pt_email_sftp_palavra_passe",
        C,
        "pw",
        """Olá Rui,

segue o acesso ao SFTP do fornecedor: utilizador acme_pt, palavra-passe ⟪S⟫. O servidor é sftp.fornecedor.pt, porta 2222.

Cumprimentos,
Marta""",
    ),
    (
        "italian_ticket_comment_vpn_pin",
        C,
        "pin:8",
        """Commento #4 — ho configurato il token VPN sul portatile di Giulia. Il PIN del token è ⟪S⟫, gliel'ho già comunicato a voce.""",
    ),
    (
        "dutch_standup_notes_api_sleutel",
        C,
        "hex:40",
        """Standup di 14:00 — Bram heeft de koppeling met het boekhoudpakket afgerond. De API-sleutel voor productie is ⟪S⟫, die staat nog niet in de kluis.""",
    ),
    (
        "polish_mattermost_haslo_do_bazy_testowej",
        C,
        "pw",
        """@kasia hasło do bazy testowej po resecie: ⟪S⟫ (użytkownik: tester). Jutro zmienię je z powrotem.""",
    ),
    (
        "czech_email_pristupove_udaje_fakturace",
        C,
        "pw",
        """Dobrý den, posílám přístupové údaje do fakturačního systému: uživatel fakturace@acme.cz, heslo ⟪S⟫. Prosím po prvním přihlášení změňte.""",
    ),
    (
        "swedish_teams_message_wifi_losenord_lager",
        C,
        "pw",
        """Hej! Gästnätet i lagret heter Acme-Lager och lösenordet är ⟪S⟫ – det byts varje månad.""",
    ),
    (
        "norwegian_sms_pin_kode_kort",
        C,
        "pin:4",
        """Hei, pin-koden til firmakortet er ⟪S⟫. Slett meldingen når du har lagret den.""",
    ),
    (
        "danish_handover_doc_adgangskode_nas",
        C,
        "pw",
        """Overdragelse: NAS'en i serverrummet (nas01) – bruger: admin, adgangskode: ⟪S⟫. Backup-jobbet kører kl. 02:00.""",
    ),
    (
        "finnish_slack_salasana_testitunnus",
        C,
        "pw",
        """Testitunnus staging-ympäristöön: käyttäjä qa-bot, salasana ⟪S⟫. Älä käytä tuotannossa.""",
    ),
    (
        "hungarian_email_jelszo_ftp_tarhely",
        C,
        "pw",
        """Szia Péter! A tárhely FTP elérése: felhasználónév acmehu, jelszó: ⟪S⟫. Üdv, Anna""",
    ),
    (
        "romanian_chat_parola_contabilitate",
        C,
        "pw",
        """Mihai: parola pentru contul de la contabilitate e ⟪S⟫, userul e contabil2. Te rog nu o trimite pe email.""",
    ),
    (
        "turkish_jira_yorum_api_anahtari",
        C,
        "an:32",
        """Yorum: Kargo entegrasyonu için yeni API anahtarı oluşturuldu: ⟪S⟫ — test ortamında denendi, çalışıyor.""",
    ),
    (
        "greek_viber_kodikos_wifi_grafeio",
        C,
        "pw",
        """Γιάννη, ο κωδικός για το Wi‑Fi του γραφείου είναι ⟪S⟫ (δίκτυο: ACME-Office).""",
    ),
    (
        "russian_telegram_token_bota_note",
        P,
        "telegram",
        """Кстати, токен бота для алертов: ⟪S⟫ — я его пока захардкодил в notify.py, потом уберу в переменные окружения.""",
    ),
    (
        "ukrainian_chat_parol_poshta_serveru",
        C,
        "pw",
        """Оля, пароль від поштової скриньки support@acme.ua — ⟪S⟫. Логін той самий, що й адреса.""",
    ),
    (
        "bulgarian_email_parola_cpanel_hosting",
        C,
        "pw",
        """Здравей, Иво! Паролата за cPanel на хостинга е ⟪S⟫, потребител acmebg. Поздрави!""",
    ),
    (
        "hebrew_slack_sisma_lemaarechet_hr",
        C,
        "pw",
        """היי דנה, הסיסמה הזמנית למערכת משאבי האנוש היא ⟪S⟫ – תחליפי אותה אחרי הכניסה הראשונה.""",
    ),
    (
        "arabic_ticket_kalimat_sir_vpn",
        C,
        "pw",
        """مرحبا أحمد، تم إنشاء حساب VPN لك. اسم المستخدم: ahmed.k وكلمة السر: ⟪S⟫ — يرجى تغييرها بعد أول تسجيل دخول.""",
    ),
    (
        "persian_telegram_ramz_panel_modiriyat",
        C,
        "pw",
        """سلام علی، رمز پنل مدیریت سایت ⟪S⟫ هست، نام کاربری هم admin.""",
    ),
    (
        "hindi_whatsapp_otp_style_bank_pin",
        C,
        "pin:6",
        """भाई, कंपनी के बैंक पोर्टल का ट्रांज़ैक्शन पिन ⟪S⟫ है, किसी को मत बताना।""",
    ),
    (
        "bengali_email_password_erp",
        C,
        "pw",
        """প্রিয় রহিম, ERP সিস্টেমে তোমার অ্যাকাউন্ট তৈরি হয়েছে। ইউজারনেম: rahim.acme, পাসওয়ার্ড: ⟪S⟫""",
    ),
    (
        "japanese_slack_dm_db_pass_staging",
        C,
        "pw",
        """田中さん、ステージングDBの接続情報です。ユーザー: app_stg / パスワード: ⟪S⟫ です。本番とは別なので注意してください。""",
    ),
    (
        "korean_kakaotalk_admin_bimilbeonho_shop",
        C,
        "pw",
        """민수님, 쇼핑몰 관리자 페이지 아이디는 shopadmin, 비밀번호는 ⟪S⟫ 입니다. 확인 부탁드려요.""",
    ),
    (
        "chinese_wechat_mima_fuwuqi_ssh",
        C,
        "pw",
        """老王，跳板机的 SSH 账号是 ops，密码：⟪S⟫，登录后记得切到 root 之前先报备。""",
    ),
    (
        "chinese_commit_note_api_miyao",
        C,
        "an:32",
        """提交说明：接入短信服务商，测试用的 AccessKey Secret 是 ⟪S⟫，上线前换成环境变量。""",
    ),
    (
        "vietnamese_zalo_mat_khau_email_cong_ty",
        C,
        "pw",
        """Chị Lan ơi, mật khẩu email công ty của em là ⟪S⟫, chị đăng nhập giúp em kiểm tra hộp thư nhé.""",
    ),
    (
        "thai_line_rahat_phan_wifi_ran",
        C,
        "pw",
        """รหัสผ่าน Wi-Fi ร้านสาขาสองคือ ⟪S⟫ นะคะ ชื่อเครือข่าย ACME-Shop2""",
    ),
    (
        "indonesian_grup_kata_sandi_dashboard_ads",
        C,
        "pw",
        """Guys, akun dashboard iklan: email marketing@acme.id, kata sandi ⟪S⟫. Jangan diganti dulu ya sampai kampanye selesai.""",
    ),
    (
        "tagalog_messenger_password_pos_terminal",
        C,
        "pw",
        """Uy, yung password ng POS terminal sa branch ay ⟪S⟫, admin yung username.""",
    ),
    (
        "swahili_email_nenosiri_mfumo_malipo",
        C,
        "pw",
        """Habari Juma, nenosiri la mfumo wa malipo ni ⟪S⟫ na jina la mtumiaji ni malipo_admin. Asante.""",
    ),
    (
        "lithuanian_slack_slaptazodis_crm",
        C,
        "pw",
        """Tomai, CRM slaptažodis naujam darbuotojui: ⟪S⟫ (vartotojas: jonas.p).""",
    ),
    (
        "slovenian_email_geslo_streznik",
        C,
        "pw",
        """Živjo Matej, geslo za strežnik za varnostne kopije je ⟪S⟫. Uporabnik je backup.""",
    ),
    (
        "catalan_agent_note_contrasenya_smtp",
        C,
        "pw",
        """Nota de la sessió: he configurat el relay SMTP; la contrasenya del compte notificacions@acme.cat és ⟪S⟫.""",
    ),
    (
        "afrikaans_whatsapp_wagwoord_kluis",
        C,
        "pw",
        """Die wagwoord vir die gedeelde kluis op die NAS is ⟪S⟫ — moenie dit op die groep deel nie.""",
    ),
    (
        "spanish_agent_session_token_github_pegado",
        P,
        "ghp",
        """El usuario pegó su token para que yo pudiera clonar el repo privado: ⟪S⟫. Lo usé una vez con `git clone` y no lo guardé en ningún archivo.""",
    ),
    (
        "japanese_commit_body_npm_token",
        P,
        "npm",
        """chore: 社内パッケージ公開の設定

CI で使う npm トークン ⟪S⟫ を一時的に .npmrc に書いています。後で secrets に移動します。""",
    ),
    (
        "korean_agent_note_openai_key_pasted",
        P,
        "openai",
        """사용자가 테스트용으로 OpenAI 키를 붙여넣었음: ⟪S⟫ — 로컬 .env에만 넣고 커밋하지 않음.""",
    ),
    (
        "german_commit_body_stripe_live_key",
        P,
        "sk_live",
        """fix(checkout): richtiger Stripe-Account für AT

Der alte Schlüssel gehörte zum DE-Account. Neuer Live-Key: ⟪S⟫""",
    ),
    (
        "french_chat_slack_bot_token_colle",
        P,
        "xoxb",
        """Je te colle le token du bot Slack pour que tu testes le webhook : ⟪S⟫ — ne le mets pas dans le README stp.""",
    ),
    (
        "portuguese_br_discord_chave_aws_secreta",
        C,
        "awssec",
        """galera, a chave secreta da AWS do bucket de uploads é ⟪S⟫ (access key ⟪akia⟫). alguém coloca no cofre depois?""",
    ),
]

# --------------------------------------------------------------------------
# CORPUS TABLE 6 -- recovery codes, seeds, PINs, agent session notes
# --------------------------------------------------------------------------
CORPUS += [
    (
        "totp_otpauth_uri_in_qr_debug_log",
        C,
        "TOTP",
        """DEBUG mfa.enroll user=⟪USER⟫ provisioning_uri=otpauth://totp/Acme%20VPN:⟪USER⟫?secret=⟪S⟫&issuer=Acme%20VPN&digits=6""",
    ),
    (
        "bip39_seed_in_agent_session_wallet_restore",
        C,
        "words:12",
        """The user asked me to restore the team's treasury test wallet. They provided the recovery phrase: "⟪S⟫". I imported it with `cast wallet import treasury --mnemonic` and did not write it anywhere else.""",
    ),
    (
        "ethereum_private_key_in_hardhat_config",
        C,
        "eth",
        """module.exports = {
  solidity: "0.8.24",
  networks: {
    mainnet: {
      url: `https://eth-mainnet.g.alchemy.com/v2/${process.env.ALCHEMY_KEY}`,
      accounts: ["⟪S⟫"],
    },
  },
};""",
    ),
    (
        "alarm_system_code_in_facilities_email",
        C,
        "pin:6",
        """Hi all, the office alarm code changes on Monday. New disarm code: ⟪S⟫. Please don't write it on the whiteboard this time.""",
    ),
    (
        "sim_puk_code_in_it_ticket",
        C,
        "dig:8",
        """Ticket IT-⟪N⟫: phone locked after 3 wrong PINs. PUK for SIM 8931⟪dig:15⟫ is ⟪S⟫ — user unlocked it successfully.""",
    ),
    (
        "apple_id_recovery_key_in_password_sheet",
        C,
        "APPLE",
        """Apple ID (devices@acme.io) recovery key: ⟪S⟫ — printed copy in the safe.""",
    ),
    (
        "onepassword_secret_key_emergency_kit_text",
        C,
        "OPSK",
        """1Password Emergency Kit (text copy)
Sign-in address: acme.1password.com
Email: ⟪EMAIL⟫
Secret Key: ⟪S⟫""",
    ),
    (
        "veracrypt_volume_password_in_runbook",
        C,
        "pw",
        """Runbook: mount the offline archive disk with
veracrypt --text --mount /dev/sdb1 /mnt/archive --password='⟪S⟫' --pim=0 --keyfiles="" --protect-hidden=no""",
    ),
    (
        "luks_passphrase_in_cryptsetup_echo",
        C,
        "pw",
        """echo -n '⟪S⟫' | sudo cryptsetup luksOpen /dev/nvme1n1p2 data --key-file=-""",
    ),
    (
        "keepass_master_password_in_session_prose",
        C,
        "pw",
        """I opened the shared KeePass database (team.kdbx) with the master password the user gave me (⟪S⟫) and copied the staging SMTP entry into the .env file.""",
    ),
    (
        "agent_tool_call_json_with_password_arg",
        C,
        "pw",
        """{"type": "tool_use", "name": "bash", "input": {"command": "mysql -h ⟪HOST⟫ -u admin --password='⟪S⟫' -e 'SELECT COUNT(*) FROM orders'"}}""",
    ),
    (
        "agent_memory_file_staging_login",
        C,
        "pw",
        """# Project memory
- Tests: `make test` (needs docker)
- Staging admin UI: https://staging.acme.io/admin  (login: qa-admin / ⟪S⟫)
- Don't touch the `legacy/` folder""",
    ),
    (
        "agent_plan_with_api_key_inline",
        C,
        "hex:32",
        """Plan:
1. Export the partner catalogue with `GET /v2/catalogue` using header `X-Partner-Key: ⟪S⟫`.
2. Diff against our `products` table.
3. Open a PR with the migration.""",
    ),
    (
        "agent_tool_result_env_listing",
        C,
        "an:40",
        """Tool result (read_file .env.staging):
APP_URL=https://staging.acme.io
QUEUE_DRIVER=redis
PUSHER_APP_SECRET=⟪S⟫
PUSHER_APP_CLUSTER=eu""",
    ),
    (
        "agent_summary_credentials_used_line",
        C,
        "pw",
        """Summary of this session:
- Fixed the flaky `test_invoice_rounding` test.
- Re-ran the migration on staging (credentials used: deploy / ⟪S⟫).
- Opened PR #⟪N⟫.""",
    ),
    (
        "user_prompt_pastes_ssh_password",
        C,
        "pw",
        """User: the box is 203.0.113.42, user ubuntu, password ⟪S⟫ — can you check why nginx returns 502?""",
    ),
    (
        "mcp_server_env_block_database_url",
        C,
        "pw",
        """{
  "mcpServers": {
    "postgres": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-postgres", "postgresql://readonly:⟪S⟫@⟪HOST⟫:5432/app"]
    }
  }
}""",
    ),
    (
        "agent_scratchpad_cookie_session_value",
        C,
        "hex:64",
        """Reproduced the bug with the admin session cookie from the user's browser: `session=⟪S⟫; Path=/; HttpOnly`. Requests to /admin/export now return 500 instead of 403.""",
    ),
    (
        "pairing_code_and_master_pin_smart_lock",
        C,
        "pin:8",
        """Smart lock on the server-room door: master PIN ⟪S⟫, guest PINs rotate weekly via the app.""",
    ),
]

GEN.update(
    {
        "TOTP": lambda a: rs(32, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
        "APPLE": lambda a: "-".join(rs(4, UP + DIG) for _ in range(7)),
        "OPSK": lambda a: (
            "A3-"
            + "-".join(
                [
                    rs(6, UP + DIG),
                    rs(6, UP + DIG),
                    rs(5, UP + DIG),
                    rs(5, UP + DIG),
                    rs(5, UP + DIG),
                    rs(5, UP + DIG),
                ]
            )
        ),
    }
)


# --------------------------------------------------------------------------
# private keys (PEM / OpenSSH / PuTTY / PGP) -- built from plausible DER headers
# --------------------------------------------------------------------------
def wrap64(b, width=64):
    s = base64.b64encode(b).decode()
    return "\n".join(s[i : i + width] for i in range(0, len(s), width))


def der_rsa_pkcs8():
    return bytes.fromhex(
        "308204bd020100300d06092a864886f70d0101010500048204a7308204a30201000282010100"
    ) + rbytes(1180)


def der_rsa_pkcs1():
    return bytes.fromhex("308204a40201000282010100") + rbytes(1180)


def der_ec_p256():
    return (
        bytes.fromhex("30770201010420")
        + rbytes(32)
        + bytes.fromhex("a00a06082a8648ce3d030107a144034200")
        + b"\x04"
        + rbytes(64)
    )


def sshstr(b):
    return len(b).to_bytes(4, "big") + b


def openssh_ed25519(comment):
    pub = rbytes(32)
    pubblob = sshstr(b"ssh-ed25519") + sshstr(pub)
    check = rbytes(4)
    priv = (
        check
        + check
        + sshstr(b"ssh-ed25519")
        + sshstr(pub)
        + sshstr(rbytes(32) + pub)
        + sshstr(comment.encode())
    )
    priv += bytes(range(1, 1 + (8 - len(priv) % 8) % 8))
    blob = (
        b"openssh-key-v1\0"
        + sshstr(b"none")
        + sshstr(b"none")
        + sshstr(b"")
        + (1).to_bytes(4, "big")
        + sshstr(pubblob)
        + sshstr(priv)
    )
    return wrap64(blob, 70), base64.b64encode(pubblob).decode()


def crc24(data):
    crc = 0xB704CE
    for b in data:
        crc ^= b << 16
        for _ in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1864CFB
    return crc & 0xFFFFFF


CUSTOM = []


def custom(fn):
    CUSTOM.append(fn)
    return fn


@custom
def pem_pkcs8_in_gcp_service_account_json():
    body = wrap64(der_rsa_pkcs8())
    esc = body.replace("\n", "\\n")
    text = (
        '{\n  "type": "service_account",\n  "project_id": "acme-data-prod",\n  "private_key_id": "%s",\n'
        '  "private_key": "-----BEGIN PRIVATE KEY-----\\n%s\\n-----END PRIVATE KEY-----\\n",\n'
        '  "client_email": "bq-loader@acme-data-prod.iam.gserviceaccount.com",\n  "client_id": "%s",\n'
        '  "token_uri": "https://oauth2.googleapis.com/token"\n}'
    ) % (hx(40), esc, rs(21, DIG))
    return "pem_pkcs8_in_gcp_service_account_json", P, text, esc


@custom
def pem_rsa_pkcs1_cat_in_terminal_session():
    body = wrap64(der_rsa_pkcs1())
    text = (
        "$ cat deploy/keys/jenkins_deploy.pem\n-----BEGIN RSA PRIVATE KEY-----\n%s\n-----END RSA PRIVATE KEY-----\n$ chmod 600 deploy/keys/jenkins_deploy.pem"
        % body
    )
    return "pem_rsa_pkcs1_cat_in_terminal_session", P, text, body


@custom
def pem_ec_key_in_apple_push_helm_values():
    body = wrap64(der_ec_p256())
    ind = "\n".join("    " + l for l in body.split("\n"))
    text = (
        "apns:\n  teamId: %s\n  keyId: %s\n  privateKey: |\n    -----BEGIN EC PRIVATE KEY-----\n%s\n    -----END EC PRIVATE KEY-----"
        % (rs(10, UP + DIG), rs(10, UP + DIG), ind)
    )
    return "pem_ec_key_in_apple_push_helm_values", P, text, ind.strip()


@custom
def openssh_ed25519_private_key_in_chat_paste():
    body, pub = openssh_ed25519("deploy@ci-runner-03")
    text = (
        "here's the deploy key the old runner used, can you add it to the new one?\n\n"
        "-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n-----END OPENSSH PRIVATE KEY-----\n\n"
        "public half is ssh-ed25519 %s deploy@ci-runner-03"
    ) % (body, pub)
    return "openssh_ed25519_private_key_in_chat_paste", P, text, body


@custom
def openssh_key_in_github_actions_heredoc():
    body, _ = openssh_ed25519("actions@acme")
    text = (
        "      - name: Setup SSH\n        run: |\n          mkdir -p ~/.ssh\n          cat > ~/.ssh/id_ed25519 <<'KEY'\n"
        "          -----BEGIN OPENSSH PRIVATE KEY-----\n%s\n          -----END OPENSSH PRIVATE KEY-----\n          KEY\n          chmod 600 ~/.ssh/id_ed25519"
    ) % "\n".join("          " + l for l in body.split("\n"))
    lines = body.split("\n")
    # the first two lines are the fixed header and public part; the private part follows
    return ("openssh_key_in_github_actions_heredoc", P, text, lines[2], lines[2:])


@custom
def putty_ppk3_ed25519_key_file_cat():
    pub = base64.b64encode(sshstr(b"ssh-ed25519") + sshstr(rbytes(32))).decode()
    priv = base64.b64encode(sshstr(rbytes(32))).decode()
    text = (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-20250112\nPublic-Lines: 2\n%s\n%s\n"
        "Private-Lines: 1\n%s\nPrivate-MAC: %s"
    ) % (pub[:64], pub[64:], priv, hx(64))
    return "putty_ppk3_ed25519_key_file_cat", P, text, priv


@custom
def pgp_private_key_block_with_crc24():
    raw = b"\x95\x05\x86\x04" + rbytes(900)
    body = wrap64(raw)
    chk = base64.b64encode(crc24(raw).to_bytes(3, "big")).decode()
    text = (
        "Exported the release signing key for the new build host:\n\n-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n%s\n=%s\n-----END PGP PRIVATE KEY BLOCK-----"
    ) % (body, chk)
    return "pgp_private_key_block_with_crc24", P, text, body


@custom
def kubeconfig_client_key_data_base64_pem():
    pem = "-----BEGIN RSA PRIVATE KEY-----\n%s\n-----END RSA PRIVATE KEY-----\n" % wrap64(
        der_rsa_pkcs1()
    )
    kd = base64.b64encode(pem.encode()).decode()
    cd = base64.b64encode(
        b"-----BEGIN CERTIFICATE-----\n"
        + wrap64(rbytes(700)).encode()
        + b"\n-----END CERTIFICATE-----\n"
    ).decode()
    text = (
        "users:\n- name: kubernetes-admin\n  user:\n    client-certificate-data: %s\n    client-key-data: %s"
        % (cd, kd)
    )
    return "kubeconfig_client_key_data_base64_pem", P, text, kd


# --------------------------------------------------------------------------
# recovery codes and other multi-value secrets
# --------------------------------------------------------------------------
@custom
def recovery_codes_list_pasted_in_notes_md():
    codes = ["%s-%s" % (hx(5), hx(5)) for _ in range(10)]
    text = (
        "## GitHub org owner account (acme-admin)\n\nRecovery codes, generated %s:\n\n```\n%s\n```\nKeep these in the safe, not here."
        % (fill("⟪DATE⟫", ""), "\n".join(codes))
    )
    return "recovery_codes_list_pasted_in_notes_md", C, text, codes[0], codes


@custom
def google_backup_codes_txt_in_home_dir():
    codes = ["%s %s" % (rs(4, DIG), rs(4, DIG)) for _ in range(10)]
    rows = "\n".join("%d. %s    %d. %s" % (i + 1, codes[i], i + 6, codes[i + 5]) for i in range(5))
    text = (
        "$ cat ~/Documents/Backup-codes-ops.acme.txt\nBACKUP VERIFICATION CODES\nops@acme.io\n\n%s\n\n(Each code can be used only once.)"
        % rows
    )
    return "google_backup_codes_txt_in_home_dir", C, text, codes[0], codes


@custom
def totp_setup_key_spaced_in_chat():
    key = rs(32, "abcdefghijklmnopqrstuvwxyz234567")
    spaced = " ".join(key[i : i + 4] for i in range(0, 32, 4))
    text = (
        "If the QR code won't scan, enter the setup key manually in Authenticator:\n%s\n(time based, account: shared-aws-root)"
        % spaced
    )
    return "totp_setup_key_spaced_in_chat", C, text, spaced


# --------------------------------------------------------------------------
# disguised values: split, concatenated, encoded
# --------------------------------------------------------------------------
def split3(v):
    a, b = len(v) // 3, 2 * len(v) // 3
    return [v[:a], v[a:b], v[b:]]


@custom
def python_implicit_concat_split_ghp():
    parts = split3(GEN["ghp"](None))
    text = (
        'GH_TOKEN = (\n    "%s"\n    "%s"\n    "%s"\n)\nheaders = {"Authorization": f"token {GH_TOKEN}"}'
        % tuple(parts)
    )
    return "python_implicit_concat_split_ghp", P, text, parts[0], parts


@custom
def javascript_plus_concat_password():
    v = pw() + rs(4)
    parts = [v[: len(v) // 2], v[len(v) // 2 :]]
    text = (
        "// split so the scanner doesn't flag it\nconst dbPassword = '%s' +\n  '%s';\nconst pool = new Pool({ user: 'app', password: dbPassword, host: 'db.internal' });"
        % tuple(parts)
    )
    return "javascript_plus_concat_password", C, text, max(parts, key=len), parts


@custom
def shell_two_var_join_api_token():
    v = hx(40)
    parts = [v[:20], v[20:]]
    text = (
        'TOK_A="%s"\nTOK_B="%s"\ncurl -H "Authorization: Bearer ${TOK_A}${TOK_B}" https://api.partner.io/v1/ping'
        % tuple(parts)
    )
    return "shell_two_var_join_api_token", C, text, parts[0], parts


@custom
def terraform_join_list_slack_webhook():
    path = "T%s/B%s/%s" % (rs(8, UP + DIG), rs(10, UP + DIG), rs(24))
    t, b, s = path.split("/")
    text = (
        'locals {\n  slack_hook = join("/", ["https://hooks.slack.com/services", "%s", "%s", "%s"])\n}'
        % (t, b, s)
    )
    return "terraform_join_list_slack_webhook", C, text, s, [s]


@custom
def terminal_wrapped_sendgrid_key_two_lines():
    v = GEN["sendgrid"](None)
    pre = "export SENDGRID_API_KEY="
    cut = 80 - len(pre)
    parts = [v[:cut], v[cut:]]
    text = "$ cat deploy.env | head -3\nNODE_ENV=production\n%s%s\n%s\nSENTRY_ENVIRONMENT=prod" % (
        pre,
        parts[0],
        parts[1],
    )
    return "terminal_wrapped_sendgrid_key_two_lines", P, text, parts[0], parts


@custom
def basic_auth_header_base64_user_pass():
    p = pw()
    enc = base64.b64encode(("ci-reader:" + p).encode()).decode()
    text = (
        "> GET /artifactory/api/storage/libs-release HTTP/1.1\n> Host: artifacts.acme.io\n> Authorization: Basic %s\n> User-Agent: curl/8.5.0"
        % enc
    )
    return "basic_auth_header_base64_user_pass", C, text, enc


@custom
def k8s_opaque_secret_data_field_b64_password():
    p = pw()
    enc = base64.b64encode(p.encode()).decode()
    text = (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: pg-app\ntype: Opaque\ndata:\n  username: %s\n  password: %s"
        % (base64.b64encode(b"app").decode(), enc)
    )
    return "k8s_opaque_secret_data_field_b64_password", C, text, enc


@custom
def docker_config_json_auths_base64():
    enc = base64.b64encode(("robot$ci+" + rs(6, LO) + ":" + rs(32)).encode()).decode()
    text = '{\n  "auths": {\n    "harbor.acme.io": {\n      "auth": "%s"\n    }\n  }\n}' % enc
    return "docker_config_json_auths_base64", C, text, enc


@custom
def base64_wrapped_github_pat_env():
    enc = base64.b64encode(GEN["ghfg"](None).encode()).decode()
    text = (
        "# decoded at runtime by entrypoint.sh (base64 -d)\nGIT_TOKEN_B64=%s\nGIT_USER=acme-bot"
        % enc
    )
    return "base64_wrapped_github_pat_env", C, text, enc


@custom
def url_encoded_password_in_postgres_url():
    p = pwx()
    enc = urllib.parse.quote(p, safe="")
    text = 'DATABASE_URL="postgresql://billing:%s@%s:5432/billing?sslmode=require"' % (
        enc,
        R.choice(HOSTS),
    )
    return "url_encoded_password_in_postgres_url", C, text, enc


@custom
def url_encoded_token_in_oauth_redirect_log():
    tok = GEN["gho"](None)
    enc = urllib.parse.quote(tok, safe="").replace("_", "%5F")
    text = (
        'GET /auth/complete?next=%%2Fdashboard&access%%5Ftoken=%s&token%%5Ftype=bearer HTTP/1.1" 302 0'
        % enc
    )
    return "url_encoded_token_in_oauth_redirect_log", C, text, enc


@custom
def hex_encoded_password_in_ini():
    p = pw()
    enc = p.encode().hex()
    text = (
        "[replication]\nprimary = 10.0.7.20\nuser = repl\n; password stored hex-encoded (decoded by start.sh with xxd -r -p)\npassword_hex = %s"
        % enc
    )
    return "hex_encoded_password_in_ini", C, text, enc


@custom
def python_bytes_fromhex_api_key():
    key = rs(32)
    enc = key.encode().hex()
    text = 'API_KEY = bytes.fromhex("%s").decode()\nclient = PartnerClient(api_key=API_KEY)' % enc
    return "python_bytes_fromhex_api_key", C, text, enc


@custom
def html_entities_password_in_xml_attribute():
    p = (
        rs(4, ALNUM)
        + "&"
        + rs(4, ALNUM)
        + "<"
        + rs(3, DIG)
        + ">"
        + rs(3, ALNUM)
        + '"'
        + rs(2, ALNUM)
    )
    enc = p.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    text = (
        '<datasource jndi-name="java:/LedgerDS" pool-name="LedgerDS">\n  <connection-url>jdbc:postgresql://db:5432/ledger</connection-url>\n  <security>\n    <user-name>ledger</user-name>\n    <password>%s</password>\n  </security>\n</datasource>'
        % enc
    )
    return "html_entities_password_in_xml_attribute", C, text, enc


@custom
def json_unicode_escaped_password():
    p = pw()
    enc = "".join("\\u%04x" % ord(ch) for ch in p)
    text = '{"smtp": {"host": "smtp.acme.io", "user": "alerts", "password": "%s"}}' % enc
    return "json_unicode_escaped_password", C, text, enc


@custom
def reversed_string_secret_in_python():
    v = rs(40)
    text = '# obfuscated so it does not show up in grep\nSIGNING_SECRET = "%s"[::-1]' % v[::-1]
    return "reversed_string_secret_in_python", C, text, v[::-1]


@custom
def java_char_array_literal_password():
    p = rs(12, ALNUM)
    arr = ",".join("'%s'" % ch for ch in p)
    text = "// keystore password\nprivate static final char[] KS_PASS = new char[] {%s};" % arr
    return "java_char_array_literal_password", C, text, arr


@custom
def chat_password_split_over_two_messages():
    p = pw() + rs(3)
    h = len(p) // 2
    parts = [p[:h], p[h:]]
    text = (
        "[10:02] ⟪U⟫: sending the prod DB password in two halves\n[10:02] ⟪U⟫: first half: %s\n[10:03] ⟪U⟫: second half: %s\n[10:03] ⟪U2⟫: got it, thanks".replace(
            "⟪U⟫", R.choice(USERS)
        ).replace("⟪U2⟫", R.choice(USERS))
        % tuple(parts)
    )
    return "chat_password_split_over_two_messages", C, text, max(parts, key=len), parts


@custom
def printf_concat_secret_in_dockerfile_run():
    v = rs(36)
    parts = [v[:12], v[12:24], v[24:]]
    text = (
        "RUN printf '%%s%%s%%s' '%s' '%s' '%s' > /run/license.key && ./install.sh --license-file /run/license.key"
        % tuple(parts)
    )
    return "printf_concat_secret_in_dockerfile_run", C, text, parts[1], parts


@custom
def yaml_double_quoted_line_continuation_token():
    v = GEN["glpat"](None)
    parts = [v[:13], v[13:]]
    text = 'gitlab:\n  token: "%s\\\n    %s"\n  url: https://gitlab.acme.io' % tuple(parts)
    return "yaml_double_quoted_line_continuation_token", P, text, parts[0], parts


# --------------------------------------------------------------------------
# BENIGN TABLE -- look-alikes that hold no secret and must survive unchanged
# (class, number of random variants, template)
# --------------------------------------------------------------------------
def ssh_pub(kind="ed25519"):
    if kind == "ed25519":
        return (
            "ssh-ed25519 " + base64.b64encode(sshstr(b"ssh-ed25519") + sshstr(rbytes(32))).decode()
        )
    return (
        "ssh-rsa "
        + base64.b64encode(
            sshstr(b"ssh-rsa") + sshstr(b"\x01\x00\x01") + sshstr(b"\x00" + rbytes(256))
        ).decode()
    )


def cert_pem():
    return (
        "-----BEGIN CERTIFICATE-----\n"
        + wrap64(bytes.fromhex("308203") + rbytes(2) + bytes.fromhex("308202") + rbytes(760))
        + "\n-----END CERTIFICATE-----"
    )


def pubkey_pem():
    return (
        "-----BEGIN PUBLIC KEY-----\n"
        + wrap64(
            bytes.fromhex("30820122300d06092a864886f70d01010105000382010f003082010a0282010100")
            + rbytes(256)
            + bytes.fromhex("0203010001")
        )
        + "\n-----END PUBLIC KEY-----"
    )


GEN.update(
    {
        "stripe_pk": lambda a: "pk_live_51" + rs(97),
        "mapbox_pk": lambda a: mapbox_pk(),
        "clerk_pk": lambda a: clerk_pk(),
        "recaptcha_site": lambda a: "6L" + rs(38, B64U),
        "sshpub": lambda a: ssh_pub(a or "ed25519"),
        "certpem": lambda a: cert_pem(),
        "pubpem": lambda a: pubkey_pem(),
        "sri384": lambda a: "sha384-" + b64(48),
        "sri512": lambda a: "sha512-" + b64(64),
        "digest": lambda a: "sha256:" + hx(64),
        "h1": lambda a: "h1:" + b64(32),
        "ethaddr": lambda a: "0x" + hx(40),
        "btcaddr": lambda a: bech32("bc", rbytes(20)),
        "cid": lambda a: "bafybei" + rs(52, "abcdefghijklmnopqrstuvwxyz234567"),
        "nonce": lambda a: b64(16),
        "ver": lambda a: "%d.%d.%d" % (R.randrange(0, 9), R.randrange(0, 30), R.randrange(0, 40)),
        "pod": lambda a: (
            R.choice(["api", "worker", "web", "scheduler"])
            + "-"
            + rs(9, "bcdfghjklmnpqrstvwxz2456789")
            + "-"
            + rs(5, "bcdfghjklmnpqrstvwxz2456789")
        ),
        "gclient": lambda a: rs(12, DIG) + "-" + rs(32, LO + DIG) + ".apps.googleusercontent.com",
        "arn_acct": lambda a: rs(12, DIG),
        "b64txt": lambda a: base64.b64encode(
            R.choice(
                [
                    b'{"feature_flags":{"new_checkout":true,"dark_mode":false}}',
                    b"# sample configuration\nlog_level = info\nworkers = 4\n",
                    b"hello from the build pipeline\n",
                    b'<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"></svg>',
                    b"name,region,tier\nacme,eu,gold\n",
                ]
            )
            + rs(R.randrange(1, 9)).encode()
        ).decode(),
        "color": lambda a: "#" + hx(6),
        "cadata": lambda a: base64.b64encode((cert_pem() + "\n").encode()).decode(),
        "b64svg": lambda a: base64.b64encode(
            (
                '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d"><circle cx="8" cy="8" r="%d" fill="#%s"/></svg>'
                % (R.randrange(16, 64), R.randrange(16, 64), R.randrange(3, 8), hx(6))
            ).encode()
        ).decode(),
        "mac": lambda a: ":".join(hx(2) for _ in range(6)),
    }
)

BENIGN = [
    (
        "git_sha_merge_pr_message",
        5,
        """Merge pull request #⟪N⟫ from acme/⟪USER⟫/fix-rounding

fix(invoice): round half-even before tax (⟪SHA⟫)""",
    ),
    (
        "git_log_oneline_shas",
        4,
        """⟪SHORT⟫ feat(api): add cursor pagination
⟪SHORT2⟫ fix: handle empty cart in checkout
⟪SHORT3⟫ chore(deps): bump pydantic to 2.⟪N⟫.0
⟪SHORT4⟫ docs: document the retry policy""",
    ),
    (
        "git_diff_index_header",
        4,
        """diff --git a/src/billing/tax.py b/src/billing/tax.py
index ⟪hex:12⟫..⟪hex:12⟫ 100644
--- a/src/billing/tax.py
+++ b/src/billing/tax.py""",
    ),
    (
        "git_lfs_pointer_file",
        4,
        """version https://git-lfs.github.com/spec/v1
oid sha256:⟪hex:64⟫
size ⟪dig:8⟫""",
    ),
    (
        "git_submodule_status_output",
        3,
        """$ git submodule status
 ⟪SHA⟫ vendor/protos (v⟪ver⟫)
+⟪SHA2⟫ third_party/openapi-spec (heads/main)""",
    ),
    (
        "git_bisect_log_shas",
        3,
        """git bisect start
# bad: [⟪SHA⟫] release 4.⟪N⟫.0
# good: [⟪SHA2⟫] release 4.1.0
git bisect bad ⟪SHA3⟫""",
    ),
    (
        "gerrit_change_id_trailer",
        4,
        """net: retry DNS lookups with jitter

Change-Id: I⟪hex:40⟫
Reviewed-on: https://review.acme.io/c/platform/+/⟪dig:5⟫
Reviewed-by: ⟪USER⟫ <⟪EMAIL⟫>""",
    ),
    (
        "commit_coauthor_signoff_trailers",
        4,
        """refactor(queue): extract backoff helper

Co-authored-by: ⟪USER⟫ <⟪dig:8⟫+⟪USER⟫@users.noreply.github.com>
Signed-off-by: ⟪USER2⟫ <⟪EMAIL⟫>""",
    ),
    (
        "ssh_signature_block_on_commit",
        3,
        """tag v⟪ver⟫
Tagger: ⟪USER⟫ <⟪EMAIL⟫>

Release v⟪ver⟫
-----BEGIN SSH SIGNATURE-----
U1NIU0lHAAAAAQAAADMAAAALc3NoLWVkMjU1MTkAAAAg⟪b64:24⟫AAAAA3Rh
ZwAAAAAAAAAGc2hhNTEyAAAAUwAAAAtzc2gtZWQyNTUxOQAAAEA⟪b64:45⟫
-----END SSH SIGNATURE-----""",
    ),
    (
        "pgp_signature_block_release_notes",
        3,
        """-----BEGIN PGP SIGNATURE-----

iQIzBAABCAAdFiEE⟪b64:30⟫
⟪b64:45⟫
=⟪b64:3⟫
-----END PGP SIGNATURE-----""",
    ),
    (
        "docker_pull_digest_output",
        4,
        """$ docker pull ghcr.io/acme/⟪PROJ⟫:⟪ver⟫
⟪ver⟫: Pulling from acme/⟪PROJ⟫
Digest: ⟪digest⟫
Status: Downloaded newer image for ghcr.io/acme/⟪PROJ⟫:⟪ver⟫""",
    ),
    (
        "docker_ps_container_ids",
        3,
        """CONTAINER ID   IMAGE                 COMMAND                  STATUS
⟪hex:12⟫   postgres:16           "docker-entrypoint.s…"   Up 3 hours
⟪hex:12⟫   redis:7-alpine        "docker-entrypoint.s…"   Up 3 hours""",
    ),
    (
        "k8s_deployment_image_pinned_digest",
        3,
        """      containers:
        - name: api
          image: registry.acme.io/⟪PROJ⟫@⟪digest⟫
          imagePullPolicy: IfNotPresent""",
    ),
    (
        "npm_lockfile_integrity_entries",
        4,
        """    "node_modules/lodash.merge": {
      "version": "4.6.2",
      "resolved": "https://registry.npmjs.org/lodash.merge/-/lodash.merge-4.6.2.tgz",
      "integrity": "⟪sri512⟫",
      "dev": true
    }""",
    ),
    (
        "go_sum_module_hashes",
        4,
        """github.com/acme/retry v1.⟪N⟫.0 ⟪h1⟫
github.com/acme/retry v1.⟪N⟫.0/go.mod ⟪h1⟫""",
    ),
    (
        "pip_requirements_with_hashes",
        4,
        """requests==2.32.3 \\
    --hash=sha256:⟪hex:64⟫ \\
    --hash=sha256:⟪hex:64⟫""",
    ),
    (
        "cargo_lock_checksum_entry",
        3,
        """[[package]]
name = "serde_json"
version = "1.0.⟪N⟫"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "⟪hex:64⟫\"""",
    ),
    (
        "sha256sum_release_checksums",
        4,
        """⟪hex:64⟫  acme-cli_⟪ver⟫_linux_amd64.tar.gz
⟪hex:64⟫  acme-cli_⟪ver⟫_darwin_arm64.tar.gz""",
    ),
    (
        "sri_script_tag_cdn",
        4,
        """<script src="https://cdn.jsdelivr.net/npm/htmx.org@2.0.⟪N⟫/dist/htmx.min.js" integrity="⟪sri384⟫" crossorigin="anonymous"></script>""",
    ),
    (
        "csp_header_with_nonce",
        3,
        """content-security-policy: default-src 'self'; script-src 'self' 'nonce-⟪nonce⟫'; object-src 'none'; base-uri 'self'""",
    ),
    (
        "etag_and_cache_busted_assets",
        3,
        """< HTTP/2 200
< etag: W/"⟪hex:32⟫"
< cache-control: public, max-age=31536000, immutable
GET /assets/app.⟪hex:8⟫.js  GET /assets/vendor.⟪hex:8⟫.css""",
    ),
    (
        "uuid_request_id_in_log",
        5,
        """⟪DATE⟫T⟪TIME⟫Z INFO http request_id=⟪uuid⟫ method=POST path=/v1/orders status=201 duration_ms=⟪N⟫""",
    ),
    (
        "uuid_idempotency_key_header",
        3,
        """curl -X POST https://api.acme.io/v1/payments -H "Idempotency-Key: ⟪uuid⟫" -H "Content-Type: application/json" -d @payment.json""",
    ),
    (
        "k8s_object_uid_metadata",
        3,
        """metadata:
  name: ⟪pod⟫
  namespace: default
  uid: ⟪uuid⟫
  resourceVersion: "⟪dig:8⟫\"""",
    ),
    (
        "azure_tenant_subscription_ids",
        4,
        """az account set --subscription ⟪uuid⟫
# tenant: ⟪uuid2⟫  (public directory id, see portal > Entra ID > Overview)""",
    ),
    (
        "otel_trace_span_ids",
        3,
        """{"traceId":"⟪hex:32⟫","spanId":"⟪hex:16⟫","parentSpanId":"⟪hex:16⟫","name":"GET /healthz","kind":2}""",
    ),
    (
        "stripe_publishable_key_frontend",
        4,
        """const stripe = Stripe('⟪stripe_pk⟫');
const elements = stripe.elements({ clientSecret });""",
    ),
    (
        "mapbox_public_token_map_init",
        3,
        """mapboxgl.accessToken = '⟪mapbox_pk⟫';
const map = new mapboxgl.Map({ container: 'map', style: 'mapbox://styles/mapbox/streets-v12' });""",
    ),
    (
        "clerk_publishable_key_env",
        3,
        """NEXT_PUBLIC_CLERK_PUBLISHABLE_KEY=⟪clerk_pk⟫
NEXT_PUBLIC_CLERK_SIGN_IN_URL=/sign-in""",
    ),
    (
        "recaptcha_site_key_html",
        3,
        """<div class="g-recaptcha" data-sitekey="⟪recaptcha_site⟫"></div>""",
    ),
    (
        "google_oauth_client_id_only",
        3,
        """<meta name="google-signin-client_id" content="⟪gclient⟫">""",
    ),
    (
        "ssh_authorized_keys_lines",
        5,
        """# ~/.ssh/authorized_keys on bastion
⟪sshpub⟫ ⟪USER⟫@laptop
⟪sshpub:rsa⟫ deploy@ci""",
    ),
    (
        "ssh_known_hosts_entries",
        3,
        """github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl
git.acme.io ⟪sshpub⟫""",
    ),
    (
        "pem_certificate_chain_public",
        4,
        """# ca-bundle for the internal registry
⟪certpem⟫""",
    ),
    ("pem_public_key_jwt_verify", 3, """JWT_PUBLIC_KEY=\"⟪pubpem⟫\""""),
    (
        "jwks_public_key_json",
        3,
        """{"keys":[{"kty":"RSA","use":"sig","kid":"⟪hex:16⟫","alg":"RS256","n":"⟪b64u:256⟫","e":"AQAB"}]}""",
    ),
    (
        "k8s_ca_cert_data_public",
        3,
        """clusters:
- cluster:
    certificate-authority-data: ⟪cadata⟫
    server: https://k8s.acme.io:6443
  name: prod-eu""",
    ),
    (
        "gpg_key_fingerprint_signing_config",
        3,
        """[user]
	signingkey = ⟪HEX:40⟫
[commit]
	gpgsign = true""",
    ),
    (
        "aws_documented_example_credentials",
        3,
        """# From the AWS docs -- example values only
aws_access_key_id = AKIAIOSFODNN7EXAMPLE
aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
# replace with your own, see ticket OPS-⟪N⟫""",
    ),
    (
        "placeholder_angle_brackets_readme",
        4,
        """## Configure
Set the token before running the sync:

    export ACME_API_TOKEN=<your-api-token>
    acme sync --project ⟪PROJ⟫""",
    ),
    (
        "placeholder_env_var_reference_compose",
        4,
        """    environment:
      POSTGRES_USER: ${POSTGRES_USER:-app}
      POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:?set in .env}
      POSTGRES_DB: ⟪PROJ⟫""",
    ),
    (
        "placeholder_gha_secrets_expression",
        4,
        """      - run: ./scripts/publish.sh
        env:
          NPM_TOKEN: ${{ secrets.NPM_TOKEN }}
          SLACK_WEBHOOK: ${{ secrets.SLACK_WEBHOOK_⟪up:4⟫ }}""",
    ),
    (
        "placeholder_helm_template_expression",
        3,
        """        env:
          - name: DB_PASSWORD
            value: {{ .Values.db.password | quote }}
          - name: RELEASE
            value: {{ .Release.Name }}-⟪N⟫""",
    ),
    (
        "placeholder_xxx_filled_example",
        4,
        """# .env.example
STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx
GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
APP_PORT=⟪dig:4⟫""",
    ),
    (
        "placeholder_changeme_marker_in_template",
        3,
        """db:
  user: app
  password: "REPLACE_ME"   # filled in by the deploy pipeline (see ⟪PROJ⟫/README, OPS-⟪N⟫)""",
    ),
    (
        "masked_asterisks_config_dump",
        4,
        """$ acme config show
api_url:     https://api.acme.io
api_token:   ********
db_password: ****************
region:      eu-⟪N⟫""",
    ),
    (
        "masked_prefix_suffix_token_listing",
        4,
        """NAME            TOKEN                      LAST USED
ci-publisher    npm_****************⟪an:4⟫   ⟪DATE⟫
release-bot     ghp_…⟪an:4⟫                ⟪DATE2⟫""",
    ),
    (
        "redacted_marker_in_log",
        4,
        """⟪DATE⟫T⟪TIME⟫Z DEBUG outbound headers={"Authorization": "[REDACTED]", "X-Request-Id": "⟪uuid⟫"}""",
    ),
    (
        "k8s_secret_key_ref_only",
        4,
        """          env:
            - name: DB_PASSWORD
              valueFrom:
                secretKeyRef:
                  name: ⟪PROJ⟫-db-v⟪N⟫
                  key: password""",
    ),
    (
        "vault_path_and_op_reference",
        4,
        """DB_PASSWORD=op://Engineering/⟪PROJ⟫-postgres/password
API_TOKEN=vault:secret/data/prod/⟪PROJ⟫#api_token""",
    ),
    (
        "aws_ssm_secretsmanager_arns",
        4,
        """DbPasswordArn: arn:aws:secretsmanager:eu-west-1:⟪arn_acct⟫:secret:prod/⟪PROJ⟫/db-⟪an:6⟫
ApiKeyParam: arn:aws:ssm:eu-west-1:⟪arn_acct⟫:parameter/prod/⟪PROJ⟫/api-key""",
    ),
    (
        "code_password_from_environment",
        4,
        """DB_PASSWORD = os.environ["DB_PASSWORD"]
API_TOKEN = os.getenv("ACME_API_TOKEN", "")
engine = create_engine(f"postgresql://app:{DB_PASSWORD}@⟪HOST⟫/app", pool_size=⟪N⟫)""",
    ),
    (
        "code_getpass_and_prompt",
        3,
        """password = getpass.getpass("Password for ⟪USER⟫@⟪HOST⟫: ")
token = input("Paste your API token (input hidden in production build): ")""",
    ),
    (
        "cli_password_stdin_from_variable",
        4,
        """echo "$REGISTRY_PASSWORD" | docker login registry.acme.io -u ⟪USER⟫ --password-stdin
aws ecr get-login-password --region eu-west-1 | docker login --username AWS --password-stdin ⟪arn_acct⟫.dkr.ecr.eu-west-1.amazonaws.com""",
    ),
    (
        "cli_password_prompt_flag_no_value",
        3,
        """mysql -h ⟪HOST⟫ -u ⟪USER⟫ -p
Enter password:
psql -h ⟪HOST⟫ -U ⟪USER⟫ -W app""",
    ),
    (
        "config_password_file_path",
        4,
        """[database]
host = ⟪HOST⟫
user = ⟪USER⟫
password_file = /run/secrets/⟪PROJ⟫_db_password""",
    ),
    (
        "config_password_empty_or_null",
        3,
        """redis:
  host: localhost
  port: 6379
  password: null      # no auth on the local dev instance
  db: ⟪N⟫""",
    ),
    (
        "password_hashing_parameters",
        3,
        """PASSWORD_HASHERS = ["django.contrib.auth.hashers.Argon2PasswordHasher"]
ARGON2_TIME_COST = ⟪N⟫
ARGON2_MEMORY_COST = 65536
AUTH_PASSWORD_VALIDATORS = [{"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 12}}]""",
    ),
    (
        "test_names_about_passwords",
        3,
        """tests/test_auth.py::test_password_too_short PASSED
tests/test_auth.py::test_token_expired_returns_401 PASSED
tests/test_auth.py::test_reset_link_single_use PASSED
=========== ⟪N⟫ passed in 3.42s ===========""",
    ),
    (
        "html_password_input_form",
        3,
        """<form method="post" action="/login">
  <input type="email" name="email" autocomplete="username">
  <input type="password" name="password" autocomplete="current-password" minlength="12">
  <input type="hidden" name="form_id" value="login-⟪N⟫">
</form>""",
    ),
    (
        "llm_usage_token_counts",
        4,
        """{"id":"chatcmpl-⟪an:24⟫","model":"gpt-4o-mini","usage":{"prompt_tokens":⟪N⟫,"completion_tokens":⟪N2⟫,"total_tokens":⟪dig:4⟫}}""",
    ),
    (
        "version_strings_and_build_metadata",
        4,
        """acme-cli version ⟪ver⟫+build.⟪dig:4⟫.g⟪SHORT⟫ (go1.23.4, linux/amd64)
server: ⟪ver⟫-rc.2, schema: ⟪dig:14⟫""",
    ),
    ("base64_data_uri_icon", 3, """<link rel="icon" href="data:image/svg+xml;base64,⟪b64svg⟫">"""),
    (
        "base64_configmap_binary_data_non_secret",
        4,
        """apiVersion: v1
kind: ConfigMap
metadata:
  name: ⟪PROJ⟫-static
binaryData:
  settings.json: ⟪b64txt⟫""",
    ),
    (
        "css_hex_colors_palette",
        3,
        """:root {
  --brand: ⟪color⟫;
  --brand-dark: ⟪color⟫;
  --surface: ⟪color⟫;
}""",
    ),
    (
        "network_mac_ip_inventory",
        3,
        """host printer-2f { hardware ethernet ⟪mac⟫; fixed-address 10.0.2.⟪N⟫; }
host ap-lobby    { hardware ethernet ⟪mac⟫; fixed-address 10.0.2.⟪N2⟫; }""",
    ),
    (
        "ethereum_contract_addresses_public",
        3,
        """Deployed contracts (mainnet):
  Token:    ⟪ethaddr⟫
  Treasury: ⟪ethaddr⟫
  tx: 0x⟪hex:64⟫""",
    ),
    ("bitcoin_donation_address", 3, """Support the project: bitcoin:⟪btcaddr⟫ — thank you!"""),
    ("ipfs_cid_pinned_assets", 3, """pinned ⟪cid⟫ (docs-site v⟪ver⟫, 14.2 MB)"""),
    (
        "k8s_pod_names_with_hashes",
        3,
        """NAME                              READY   STATUS    RESTARTS   AGE
⟪pod⟫          1/1     Running   0          ⟪N⟫m
⟪pod⟫          1/1     Running   2          3d""",
    ),
    (
        "aws_arn_account_and_request_id",
        4,
        """An error occurred (AccessDenied) when calling the PutObject operation: User: arn:aws:sts::⟪arn_acct⟫:assumed-role/ci-deployer/⟪dig:10⟫ is not authorized. RequestId: ⟪HEX:16⟫""",
    ),
    (
        "s3_etag_and_version_ids",
        3,
        """{"ETag": "\\"⟪hex:32⟫\\"", "VersionId": "⟪b64u:24⟫", "ServerSideEncryption": "aws:kms"}""",
    ),
    (
        "sigstore_rekor_log_entry",
        3,
        """tlog entry created with index: ⟪dig:9⟫
Rekor UUID: 24296fb24b8ad77a⟪hex:64⟫""",
    ),
    (
        "github_app_and_installation_ids",
        3,
        """GITHUB_APP_ID=⟪dig:6⟫
GITHUB_APP_INSTALLATION_ID=⟪dig:8⟫
GITHUB_APP_PRIVATE_KEY_PATH=/etc/acme/github-app.pem""",
    ),
    (
        "compose_secrets_file_references",
        3,
        """services:
  api:
    secrets: [db_password, stripe_key]
secrets:
  db_password:
    file: ./secrets/db_password.txt
  stripe_key:
    environment: STRIPE_SECRET_KEY_⟪up:3⟫""",
    ),
    (
        "ci_cache_key_with_hashes",
        3,
        """Cache restored from key: Linux-node20-npm-⟪hex:64⟫
Received ⟪dig:8⟫ of ⟪dig:8⟫ (100.0%), 58.1 MBs/sec""",
    ),
    (
        "prose_rotation_without_value",
        1,
        """Rotated the staging database password this morning; the new value is in the team vault under "staging-postgres". Nothing to change in the repo, the app reads it from DB_PASSWORD.""",
    ),
    (
        "prose_rotation_without_value",
        1,
        """Heads-up: the Stripe restricted key used by the reporting job was revoked after the audit. A new one is in 1Password (item "stripe-reporting"), I'll update the CI secret tonight.""",
    ),
    (
        "prose_rotation_without_value",
        1,
        """I didn't put the token in the notes on purpose — ask me on Signal if you need it, or better, request your own from the admin console.""",
    ),
    (
        "prose_rotation_without_value",
        1,
        """Session note: the tests need a valid API key, so I skipped the integration suite. Set ACME_API_KEY in your shell (see docs/dev-setup.md) and run `make test-integration`.""",
    ),
    (
        "prose_password_policy",
        1,
        """Password policy from the security review: minimum 14 characters, no reuse of the last 10 passwords, MFA required for all admin accounts, and service accounts must use keys rotated every 90 days.""",
    ),
    (
        "prose_password_policy",
        1,
        """The reset flow sends a one-time link valid for 30 minutes; the user then chooses a new password, which we hash with Argon2id (t=3, m=64 MiB, p=4).""",
    ),
    (
        "prose_totp_explanation",
        1,
        """TOTP codes are 6 digits and change every 30 seconds; the server accepts one step of clock drift. The shared secret never leaves the enrollment screen.""",
    ),
    (
        "prose_where_token_lives",
        1,
        """The deploy token lives in the CI variables as DEPLOY_TOKEN (masked, protected). Locally, `direnv` loads it from ~/.config/acme/token which is not in the repo.""",
    ),
    (
        "i18n_rotation_prose_french",
        1,
        """Le mot de passe de la base de staging a été changé ce matin ; il est dans le coffre Bitwarden, pas dans le dépôt.""",
    ),
    (
        "i18n_rotation_prose_german",
        1,
        """Das Passwort für den SFTP-Zugang steht im Tresor unter „Lieferant SFTP“ – bitte nicht in Tickets kopieren.""",
    ),
    (
        "i18n_rotation_prose_spanish",
        1,
        """La contraseña nueva del servidor ya está en el gestor de contraseñas; pídesela a Marta si no tienes acceso.""",
    ),
    (
        "i18n_rotation_prose_japanese",
        1,
        """本番DBのパスワードは変更済みです。新しい値はパスワード管理ツールに保存しました（チャットには貼らないでください）。""",
    ),
    (
        "i18n_rotation_prose_russian",
        1,
        """Пароль от админки поменял, новый лежит в KeePass в папке «Прод». В чат не пишу.""",
    ),
    (
        "i18n_rotation_prose_portuguese",
        1,
        """A senha do Wi-Fi mudou, está no cofre compartilhado da equipe. Não mandem por e-mail.""",
    ),
    (
        "i18n_rotation_prose_korean",
        1,
        """관리자 비밀번호는 변경했고, 새 비밀번호는 사내 금고에 저장해 두었습니다.""",
    ),
    (
        "i18n_rotation_prose_chinese",
        1,
        """数据库密码已经更换，新密码放在团队的密码库里，请不要在群里发。""",
    ),
    (
        "i18n_rotation_prose_italian",
        1,
        """La password del pannello è stata cambiata; la trovate nel vault del team sotto “pannello-prod”.""",
    ),
    (
        "i18n_rotation_prose_polish",
        1,
        """Hasło do serwera zostało zmienione – nowe jest w menedżerze haseł, nie wysyłajcie go mailem.""",
    ),
    (
        "i18n_rotation_prose_turkish",
        1,
        """Sunucu şifresi değiştirildi, yenisi ekip kasasında. Lütfen sohbete yazmayın.""",
    ),
    (
        "i18n_rotation_prose_arabic",
        1,
        """تم تغيير كلمة المرور، وهي محفوظة الآن في خزنة الفريق. لا ترسلوها عبر البريد.""",
    ),
    ("i18n_rotation_prose_hindi", 1, """सर्वर का पासवर्ड बदल दिया गया है, नया पासवर्ड टीम वॉल्ट में है।"""),
    (
        "i18n_rotation_prose_dutch",
        1,
        """Het wachtwoord van de NAS is gewijzigd; het nieuwe staat in de teamkluis, niet in Slack zetten.""",
    ),
    (
        "i18n_rotation_prose_vietnamese",
        1,
        """Mật khẩu máy chủ đã được đổi, mật khẩu mới nằm trong kho mật khẩu của nhóm.""",
    ),
    (
        "i18n_rotation_prose_swedish",
        1,
        """Lösenordet till routern är bytt, det nya finns i teamets lösenordshanterare.""",
    ),
    (
        "jwt_header_only_decoded_discussion",
        2,
        """The header decodes to {"alg":"RS256","typ":"JWT","kid":"⟪hex:16⟫"} — i.e. eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9 is just the base64 of the algorithm, not the token.""",
    ),
    (
        "masked_card_and_iban_style_numbers",
        3,
        """Payment method: Visa •••• ⟪dig:4⟫, exp 0⟪dig:1⟫/2⟪dig:1⟫
Payout account: NL** **** **** **⟪dig:2⟫ ⟪dig:2⟫""",
    ),
    (
        "uuid_ids_in_sql_queries",
        3,
        """SELECT id, status FROM orders WHERE customer_id = '⟪uuid⟫' AND created_at > now() - interval '7 days';""",
    ),
    (
        "sql_password_column_ddl",
        3,
        """CREATE TABLE users (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email citext UNIQUE NOT NULL,
  password_hash text NOT NULL,
  password_changed_at timestamptz,
  mfa_secret_encrypted bytea
); -- migration ⟪dig:14⟫""",
    ),
    (
        "token_type_and_expiry_fields",
        3,
        """{"token_type": "Bearer", "expires_in": ⟪dig:4⟫, "scope": "read:orders write:orders", "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"}""",
    ),
]


# --------------------------------------------------------------------------
# build, check, write
# --------------------------------------------------------------------------
def previous_kinds():
    """Only the `kind` values of sets 8/9 are read, to keep every kind new."""
    base = os.path.join(HERE, "..", "main", "bench", "secrets")
    kinds = set()
    for name in ("corpus_heldout8.jsonl", "corpus_heldout9.jsonl"):
        path = os.path.join(base, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                kinds.update(json.loads(line)["kind"] for line in fh if line.strip())
    return kinds


def build_corpus():
    rows = []
    for kind, shape, spec, template in CORPUS:
        name, _, arg = spec.partition(":")
        secret = GEN[name](arg or None)
        rows.append(
            {"kind": kind, "text": fill(template, secret), "secret": secret, "shape": shape}
        )
    for fn in CUSTOM:
        out = fn()
        kind, shape, text, secret = out[:4]
        row = {"kind": kind, "text": text, "secret": secret, "shape": shape}
        if len(out) > 4:
            row["parts"] = list(out[4])
        rows.append(row)
    return rows


def build_benign():
    rows = []
    for cls, n, template in BENIGN:
        for _ in range(n):
            rows.append({"source": "heldout10:" + cls, "text": fill(template, "")})
    return rows


def check(corpus, benign):
    errors = []
    kinds = [r["kind"] for r in corpus]
    dup = {k for k in kinds if kinds.count(k) > 1}
    if dup:
        errors.append("duplicate kinds: %s" % sorted(dup))
    old = previous_kinds() & set(kinds)
    if old:
        errors.append("kinds already used in sets 8/9: %s" % sorted(old))
    for r in corpus:
        if not re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)*", r["kind"]):
            errors.append("kind not snake_case: " + r["kind"])
        if r["shape"] not in (P, C):
            errors.append("bad shape: " + r["kind"])
        if "⟪" in r["text"] or "⟫" in r["text"]:
            errors.append("unfilled placeholder: " + r["kind"])
        for piece in [r["secret"]] + r.get("parts", []):
            if not piece or piece not in r["text"]:
                errors.append("secret/part not in text: " + r["kind"])
    texts = [b["text"] for b in benign]
    if len(set(texts)) != len(texts):
        errors.append("benign texts not distinct (%d duplicates)" % (len(texts) - len(set(texts))))
    for b in benign:
        if "⟪" in b["text"]:
            errors.append("unfilled placeholder in benign: " + b["source"])
    return errors


def main():
    corpus = build_corpus()
    benign = build_benign()
    errors = check(corpus, benign)
    if errors:
        for e in errors:
            print("ERROR:", e, file=sys.stderr)
        sys.exit(1)
    with open(os.path.join(HERE, "corpus_heldout10.jsonl"), "w", encoding="utf-8") as fh:
        for r in corpus:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    with open(os.path.join(HERE, "benign_heldout10.jsonl"), "w", encoding="utf-8") as fh:
        for b in benign:
            fh.write(json.dumps(b, ensure_ascii=False) + "\n")
    shapes = {}
    for r in corpus:
        shapes[r["shape"]] = shapes.get(r["shape"], 0) + 1
    classes = {}
    for b in benign:
        classes[b["source"]] = classes.get(b["source"], 0) + 1
    print(
        "corpus_heldout10.jsonl: %d samples (%s)"
        % (len(corpus), ", ".join("%s=%d" % kv for kv in sorted(shapes.items())))
    )
    print("  with parts: %d" % sum(1 for r in corpus if "parts" in r))
    print("benign_heldout10.jsonl: %d lines in %d classes" % (len(benign), len(classes)))
    for cls, n in sorted(classes.items()):
        print("  %-60s %d" % (cls, n))


if __name__ == "__main__":
    main()
