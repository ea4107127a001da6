"""The rule table of the secret filter (gitvault.scrub): which secrets exist, how each is
recognised, and the value checks the context rules share. The tables below are the
specification: every kind in RULES has its row, and no row names a kind that does not exist
(a test checks both).

Provider formats (the first group) are always redacted, documentation examples included.
Context rules (the second group) check the value first (see "Values" below).

Provider formats, recognised by their documented prefix or shape:

===============================  ==============================================================
kind                             what is redacted
===============================  ==============================================================
``pem_private_key``              a whole ``-----BEGIN … PRIVATE KEY-----`` … ``-----END …
                                 PRIVATE KEY-----`` block (RSA, EC, DSA, OPENSSH, ENCRYPTED,
                                 PGP … BLOCK), multi-line; without its END line: to the end of
                                 its paragraph (the next blank line: a truncated key pasted into
                                 a session leaves the session's later sections)
``putty_private_key``            every line after a PuTTY key file's ``Private-Lines:`` header
``aws_access_key_id``            ``AKIA`` ``ASIA`` ``ABIA`` ``ACCA`` ``AGPA`` ``AIDA`` ``AROA``
                                 ``AIPA`` ``ANPA`` ``ANVA`` ``APKA`` + 16 of ``[A-Z0-9]``
``aws_session_token``            ``FwoGZXIvYXdzE…`` / ``IQoJb3JpZ2luX2Vj…`` session tokens
``github_token``                 ``ghp_`` ``gho_`` ``ghu_`` ``ghs_`` ``ghr_`` + 30 or more
                                 alphanumerics; ``github_pat_`` + 60 or more
``gitlab_token``                 ``glpat-`` ``glptt-`` ``glrt-`` ``gldt-`` ``glcbt-`` ``gloas-``
                                 ``glsoat-`` ``glft-`` ``glimt-`` ``glagent-`` ``glffct-``
                                 ``glrtr-`` tokens, ``GR1348941`` runner registration tokens
``anthropic_api_key``            ``sk-ant-`` + 20 or more
``openai_api_key``               ``sk-`` (``sk-proj-``, ``sk-svcacct-``, ``sk-admin-``, OpenRouter
                                 ``sk-or-v1-``) + 20 or more of ``[A-Za-z0-9_-]`` with a digit
``huggingface_token``            ``hf_`` / ``api_org_`` + 30 or more letters
``groq_api_key``                 ``gsk_`` + 48 or more
``replicate_api_token``          ``r8_`` + 37
``npm_token``                    ``npm_`` + 36
``pypi_token``                   ``pypi-AgE…`` upload tokens
``rubygems_api_key``             ``rubygems_`` + 48 hex
``docker_pat``                   ``dckr_pat_`` / ``dckr_oat_`` Docker Hub tokens
``slack_token``                  ``xoxa-`` ``xoxb-`` ``xoxp-`` ``xoxo-`` ``xoxs-`` ``xoxr-``
                                 ``xoxe-`` tokens, ``xapp-`` app-level tokens
``slack_webhook``                the path of ``hooks.slack.com/services|workflows|triggers/…``
``discord_webhook``              the id and token of ``discord.com/api/webhooks/…``
``teams_webhook``                the path of ``….webhook.office.com/webhookb2/…``
``discord_bot_token``            ``M…`` / ``N…`` / ``O…`` three-part bot tokens
``telegram_bot_token``           ``<8-10 digits>:AA…`` bot tokens
``sendgrid_api_key``             ``SG.<22>.<43>``
``mailgun_api_key``              ``key-`` + 32 hex; ``<32 hex>-<8 hex>-<8 hex>``
``mailchimp_api_key``            32 hex + ``-us<n>``
``brevo_api_key``                ``xkeysib-`` + 64 hex + ``-`` + 16
``twilio_api_key``               ``SK`` + 32 hex
``stripe_key``                   ``sk_live_`` ``rk_live_`` ``sk_test_`` ``rk_test_`` + 20 or more
                                 alphanumerics; ``whsec_`` webhook signing secrets
``square_token``                 ``sq0atp-`` / ``sq0csp-`` / ``EAAA…`` access tokens
``shopify_token``                ``shpat_`` ``shpss_`` ``shpca_`` ``shppa_`` + 32 hex
``digitalocean_token``           ``dop_v1_`` ``doo_v1_`` ``dor_v1_`` + 64 hex
``google_api_key``               ``AIza`` + exactly 35 of ``[A-Za-z0-9_-]``
``google_oauth_client_secret``   ``GOCSPX-`` + 28
``google_oauth_token``           ``ya29.`` access tokens, ``1//0…`` refresh tokens
``firebase_fcm_key``             ``AAAA…:APA91b…`` server keys
``azure_ad_client_secret``       ``xxx8Q~…`` Entra ID client secrets
``heroku_api_key``               ``HRKU-`` + 20 or more
``atlassian_api_token``          ``ATATT3`` + 50 or more
``bitbucket_app_password``       ``ATBB`` + 32 or more
``linear_api_key``               ``lin_api_`` / ``lin_oauth_`` + 40
``notion_token``                 ``secret_`` + 43, ``ntn_`` + 11 digits + 35
``doppler_token``                ``dp.pt.`` ``dp.st.`` ``dp.sa.`` ``dp.ct.`` ``dp.scim.``
                                 ``dp.audit.`` tokens
``vault_token``                  HashiCorp Vault ``hvs.`` ``hvb.`` ``hvr.`` + 24 or more
``terraform_cloud_token``        ``<14>.atlasv1.<60 or more>``
``pulumi_token``                 ``pul-`` + 40 hex
``postman_api_key``              ``PMAK-<24 hex>-<34 hex>``
``airtable_token``               ``pat`` + 14 + ``.`` + 64 hex personal access tokens
``braintree_access_token``       ``access_token$production|sandbox$<16>$<32 hex>``
``age_secret_key``               ``AGE-SECRET-KEY-1…``
``flutterwave_secret_key``       ``FLWSECK-`` / ``FLWSECK_TEST-`` + 32 hex + ``-X``
``resend_api_key``               ``re_`` + 8 + ``_`` + 24 alphanumerics (upper, lower and digit)
``bitlocker_recovery_key``       eight groups of six digits, in a text that says recovery or
                                 BitLocker
``solana_keypair``               a JSON array of 64 numbers (a keypair file's bytes), in a text
                                 that names a key, a wallet or a secret
``seed_phrase``                  12 or more words in a row from BIP-39's list of 2,048 (trezor's
                                 ``mnemonic``), in a text naming a seed, wallet, phrase or backup
``totp_seed``                    base32 typed in groups of four (``mzxw 6ytb …``), six or more
                                 groups, three holding a digit, in a text naming 2FA / TOTP / MFA
``recovery_code``                each code of a list of three or more (``7c2e1-9a4b0``, ``1234
                                 5678``, a line of its own with two digits), in a text naming
                                 recovery, backup or scratch codes
``databricks_token``             ``dapi`` + 32 hex
``new_relic_key``                ``NRAK-`` ``NRII-`` keys, ``…NRAL`` license keys
``sentry_token``                 ``sntrys_`` / ``sntryu_`` auth tokens
``sentry_dsn``                   the public key of ``https://<32 hex>@host/<project>``
``grafana_token``                ``glsa_`` service-account tokens, ``glc_`` cloud tokens
``facebook_access_token``        ``EAAB`` ``EAAC`` ``EAAG`` ``EAAI`` + 100 or more
``twitter_bearer_token``         ``AAAAAAAAAAAAAAAAAAAAA…`` app bearer tokens
``cloudflare_origin_ca_key``     ``v1.0-<24 hex>-<146 hex>``
``jwt``                          ``eyJ…`` ``.`` ``eyJ…`` ``.`` signature (base64url segments)
``netlify_token``                ``nfp_`` + 36 or more
``artifactory_api_key``          ``AKCp`` + 60 or more
``supabase_token``               ``sbp_`` + 40 hex, ``sb_secret_…``
``planetscale_token``            ``pscale_pw_`` ``pscale_tkn_`` ``pscale_oauth_`` + 32 or more
``render_api_key``               ``rnd_`` + 32
``mapbox_secret_token``          ``sk.eyJ…`` secret tokens
``flyio_token``                  ``fm1_`` ``fm2_`` … macaroon tokens (``FlyV1 fm2_…``)
``azure_connection_key``         the value of ``AccountKey=`` ``SharedAccessKey=``
                                 ``SharedSecretValue=`` in a connection string
``azure_sas_signature``          the ``sig=`` of a SAS URL or token
``base64_secret``                standard or URL-safe base64 (16 or more characters) that
                                 decodes to printable text holding a secret by these rules
                                 (a wrapped token, a Kubernetes Secret's data, a base64 service
                                 account file); the whole base64 is redacted
``random_token``                 any token that reads as machine-made random text (the shape of
                                 most API keys, whatever the provider: ``xai-…``, ``pnu_…``,
                                 ``K00…``; see ``looks_random``): 20 or more letters and digits,
                                 the classes well mixed, few word-like runs; pure hex only after
                                 a short or credential-like prefix (``squ_<hex>``, not
                                 ``crash-<sha>``); never a piece of standard base64 (an
                                 integrity hash), a labelled hash (``sha256=…``), a crypt hash,
                                 a value under a public name; a UUID only after a credential's
                                 prefix (``sdk-<uuid>``); and 20 or more hex digits that decode
                                 to text holding a secret by these rules (``echo 6768705f… |
                                 xxd -r -p``)
``password_shaped``              a token that reads as a generated password, wherever it stands
                                 (no secret word needed: a config line, a call's argument, chat
                                 in any language): 10 to 48 ASCII letters, digits and symbols
                                 with lower and upper case, a digit and one of ``!@#$%^&*?~``,
                                 few word-like runs, well mixed (see ``_password_shaped``); not
                                 a flag, an e-mail address, a URL or path, a glob, a character
                                 range, an expression (``**``), an entity, a line anchor
===============================  ==============================================================

Context rules, recognised by what stands around the value:

===============================  ==============================================================
kind                             what is redacted
===============================  ==============================================================
``url_password``                 the password in ``scheme://user:password@host`` (a ``#`` or
                                 ``@`` inside the password included); scheme, user, host kept
``basic_auth``                   ``Basic <base64>`` when it decodes to ``user:password``
``bearer_token``                 ``Bearer <token>`` (16 or more characters, with a digit)
``auth_header``                  the value of ``Authorization:`` ``X-Auth-Key:`` ``X-Api-Key:``
                                 ``Api-Key:`` ``X-Vault-Token:`` ``PRIVATE-TOKEN:``
                                 ``X-Shopify-Access-Token:`` ``DD-API-KEY:``
                                 ``DD-APPLICATION-KEY:`` ``X-JFrog-Art-Api:`` headers, after any
                                 scheme word (``GenieKey …``, ``Splunk …``, ``Token …``)
``query_token``                  ``?access_token=`` ``&token=`` ``&api_key=`` ``&client_secret=``
                                 ``&password=`` ``&sig=`` ``&code=`` … or any secret name
                                 (``&db_pass=``) in URLs and form bodies
``mysql_password_flag``          ``mysql -p<password>`` (also mysqldump, mysqladmin, …)
``cli_password_flag``            ``sshpass -p``, ``docker|podman|helm|oras login … -p``,
                                 ``redis-cli … -a``, ``login -p``, ``az login … -p … --tenant``
``long_flag``                    ``--password`` ``--passwd`` ``--pass`` ``--token``
                                 ``--access-token`` ``--auth-token`` ``--api-key`` ``--apikey``
                                 ``--client-secret`` ``--secret`` ``--auth`` (``=`` or a space)
``secret_flag``                  ``--NAME=value`` / ``-NAME value`` where NAME is a secret name
                                 (below: ``--db-password``, ``-storepass``, ``--bindPassword``);
                                 after a space the value must not be a flag or a plain word; an
                                 upper-case name or a path is a placeholder
``short_flag_secret``            ``-p`` ``-w`` ``-k`` ``-a`` ``-P`` and a space, then a value that
                                 looks like a password (the strict test of ``prose_secret``)
``auth_command_token``           what ``login`` / ``auth`` / ``add-authtoken`` /
                                 ``authorize-account`` / ``set-token`` is given (after at most one
                                 word) when it is random-looking, 32 or more hex or a UUID
``user_colon_password``          ``curl -u user:password``, ``-auth user:password``,
                                 ``Client("user", "password")``; ``curl -u KEY:X`` (an API key
                                 as the user, a dummy password): the user
``conninfo_password``            ``password=…`` in a libpq / ODBC connection string
``ssh_keygen_passphrase``        ``ssh-keygen … -N <passphrase>`` / ``-P <passphrase>``
``htpasswd_password``            ``htpasswd -b … <file> <user> <password>``
``rabbitmq_password``            ``rabbitmqctl add_user|change_password <user> <password>``
``sql_password``                 ``[WITH] PASSWORD '…'``, ``PASSWORD = '…'``, ``IDENTIFIED BY '…'``
                                 (``N'…'`` too)
``sql_setting_value``            ``SET value = '…' WHERE key = '<secret name>'``, ``VALUES
                                 ('<secret name>', '…')``: a value stored under a secret's name
``numeric_code``                 the digits after PIN, PUK, passcode, door / alarm / gate /
                                 installer / master / access … code (``PUK 90817263``)
``pgpass_line``                  the last field of a ``.pgpass`` line
                                 (``host:port:database:user:password``)
``net_use_password``             ``net use`` 's password after the share or ``/user:…``
``snmp_community``               an SNMP community (``snmp-server community …``,
                                 ``rocommunity …``), not ``public`` / ``private``
``irc_password``                 ``/oper name …``, ``/msg NickServ IDENTIFY …``
``token_flag_uuid``              a UUID after ``-t`` in a text naming codecov (its upload token)
``positional_password``          ``poetry config http-basic.REPO USER …``: the password by
                                 its position
``sasl_passwd_line``             a Postfix ``sasl_passwd`` line (``[host]:port user:…``), in a
                                 text that names the map
``char_array_secret``            a character array literal given to a secret-named variable
                                 (``char[] KS_PASS = {'d','t',…}``)
``azure_devops_pat``             52 base32 characters after ``ado`` / ``azure devops`` / ``pat``
                                 and ``:`` or ``=``
``aws_secret_access_key``        40 base64 characters with a ``/`` or ``+`` (the shape of an AWS
                                 secret key), when the text mentions aws, secret, s3, iam, boto
                                 or access key
``hex_key``                      20 to 64 lower-case hex digits right after api key, app key,
                                 key, secret, token, password, passwd or license key
``auth_base64``                  ``auth`` / ``_auth`` = base64 of ``user:password`` (Docker
                                 config.json, .npmrc)
``session_cookie``               the value of a cookie named for a session or a login
                                 (``PHPSESSID``, ``connect.sid``, ``_app_session``,
                                 ``.AspNetCore.Identity.…``, ``remember_token``) in a
                                 ``Cookie:`` / ``Set-Cookie:`` header, ``curl -b`` /
                                 ``--cookie``, ``document.cookie =``, whatever it looks like
``protocol_login``               the password of a protocol's login in a session dump: IMAP
                                 ``a1 LOGIN user …``, Redis ``AUTH [user] …`` (not ``AUTH
                                 PLAIN`` / ``AUTH LOGIN``, whose base64 the other rules read)
``dsn_password``                 the password of a Go driver DSN: ``user:…@tcp(host:3306)/db``
``pgpass``                       the password field of ``host:port:db:user:password`` lines,
                                 when the text mentions pgpass
``secret_assignment``            ``NAME=value``, ``NAME: value``, ``"NAME": "value"``, one
                                 literal in a wrapper call (``NAME: tea.String("…")``,
                                 ``Some("…")``, ``codecs.decode('…', 'rot13')``; not a lookup,
                                 a hash or a pattern),
                                 ``export NAME='value'``, ``NAME := value``, ``NAME => value``,
                                 where NAME is a secret name (below); the name is kept and only
                                 the value (inside its quotes, if quoted) is redacted; an
                                 unquoted value of a passphrase name is redacted to the end of
                                 its line (its end cannot be known: fail closed); under a
                                 name for a login pair (``NEO4J_AUTH=neo4j/…``) the part after
                                 ``user/`` or ``user:``; under a ``…key`` name that is not a
                                 public, cache or hash key, machine-made text (``routing_key``)
``secret_directive``             ``NAME value`` ending a line where NAME is a secret name
                                 (``requirepass …`` in redis.conf, ``rclone config create …
                                 secret_access_key …``, ``password …`` in .netrc); the value is
                                 not a word, version, path, URL, flag or code
``spoken_secret``                a secret as people pass it on: a PIN, door, gate or safe code
                                 (four or more digits), recovery codes, a secret printed in
                                 groups of four (an app password, a TOTP key; the groups read as
                                 random), 12 to 24 seed words after a seed phrase / mnemonic
``url_path_token``               the credential in a capability URL's path: what follows
                                 ``/hooks/``, ``/webhook/``, ``/inputs/``, ``/key/``, ``/catch/``
                                 … when it reads as one, or a UUID or 32 or more hex digits that
                                 is the whole path (``https://node.example/<hex>/``)
``command_password``             a command's documented password argument (``zip -P``, ``7z
                                 -p…``, ``sqlcmd -P``, ``ldapsearch -w``, ``mosquitto_pub -P``,
                                 ``mongosh -p``, ``openssl -k`` / ``-passout pass:…``,
                                 ``smbclient -U user%…``, ``lftp -u user,…``); the command is
                                 the first word of the flag's pipeline segment
``login_string_password``        ``sqlplus user/…@db``, ``jdbc:oracle:thin:user/…@host``,
                                 ``SQL> CONNECT user/…@db``
``piped_password``               what ``echo`` / ``printf`` pipes into a command that reads a
                                 password (``--password-stdin``, ``sudo -S``, ``chpasswd``,
                                 ``passwd --stdin``) or writes to a secret-named file
                                 (``~/.vault_pass``, ``auth.txt``), and a here-string given to
                                 such a command; after ``user:`` or ``user\n``: the rest
``expect_send``                  what an expect script sends to a password prompt
``credential_call``              the string after the user in a call that logs in
                                 (``NetworkCredential("u", "…")``, ``getConnection(url, "u",
                                 "…")``, ``PlainAuth("", "u@x", "…", host)``, ``auth=("u",
                                 "…")``, ``DBI->connect(dsn, "u", "…")``, ``new PDO(dsn, "u",
                                 "…")``, ``new mysqli(host, "u", "…")``); hosts, URLs, DSNs
                                 (``dbi:Pg:dbname=x``) and empty strings are skipped
``setter_secret``                ``setPassword("…")``, ``.apiKey("…")``, ``withSecret("…")``,
                                 ``ConvertTo-SecureString "…"``: a call named for the secret it
                                 takes (not ``getPassword``, ``hashPassword`` …)
``named_argument``               a call's literal value after a literal secret name
                                 (``define('DB_PASSWORD', '…')``, ``ENV.fetch('DB_PW', '…')``,
                                 ``os.getenv("API_TOKEN", "…")``, ``config.set("password", "…")``)
``named_value``                  the value of a field whose sibling names it: ``- name:
                                 REDIS_PASSWORD`` + ``value: …`` (Kubernetes env, Azure
                                 Pipelines), ``{"name": …, "value": …}``, ``<add key="ApiSecret"
                                 value="…"/>``; whatever the value looks like
``element_value``                an XML element's text (or its ``<![CDATA[…]]>``) whose tag,
                                 ``name`` / ``key`` attribute or preceding plist / KeePass
                                 ``<key>`` / ``<Key>`` is a secret name (``<password>…
                                 </password>``, ``<entry key="smtp.password">…</entry>``)
``table_column``                 the cells under a secret-named column of a Markdown table, and
                                 in a key / value table the cell after a secret-named first cell
``csv_column``                   the cell under a secret-named column of a CSV header (an AWS
                                 credentials download)
``user_slash_password``          ``login …: user / password``, ``creds -> user / password``,
                                 ``the login … is user / password``
``slashed_login``                with no such word: a login name and a value made as passwords
                                 are (``qa-admin / W4lnut_1``, ``admin@acme.dev / ~1uq…``)
``prose_secret``                 a value after password, passphrase, pw, pwd, secret, secret key,
                                 api key, token, key, creds or credentials in prose (``the admin
                                 password is …``, ``pass to …``, ``token: …``); strict value test
``foreign_prose_secret``         the same in about thirty other languages: a value after
                                 Passwort, mot de passe, contraseña, senha, wachtwoord, hasło,
                                 пароль, şifre, 密码, パスワード, 비밀번호 … (a few letters of
                                 inflection allowed: lösenordet) and their words for "is"; the
                                 strict value test, and no letter outside ASCII in the value
``said_password``                a password said in a sentence whose "is" is not English or not
                                 there (``password SSH server sekarang …``, ``rotated; new one
                                 is …``): the first token of the rest of the line that is made as
                                 passwords are, or a passphrase (words, a symbol, a number)
``escaped_secret``               a line holding escaped text (JSON or C ``\\"`` ``\\uXXXX``, HTML
                                 ``&quot;`` ``&#77;``) unescaped and searched by these rules;
                                 what holds each secret is redacted
``urlencoded_secret``            a line holding URL-encoded text (a nested query string, a
                                 ``%40`` in a password, twice-encoded ``%253D``) decoded and
                                 searched by these rules; what holds each secret is redacted
===============================  ==============================================================

A 40-hex git SHA, a UUID, a version string or an ``sha512-`` integrity hash matches none of
these unless it is the value of a secret name.

Secret names (``secret_assignment``). The name is split into parts at ``_``, ``-``, ``.``,
digits and camelCase. It is a secret name when a part is password, passwd, pass, passphrase,
pwd, pw, secret, token, apikey, secretkey, privatekey, accesskey, credential(s),
secretkeybase, dsn, pat, psk, salt, mnemonic or creds, the last of two or more is private
(``JWT_PRIVATE``), or ends with password, passwd, passphrase, pwd, secret, token or
apikey (``PGPASSWORD``, ``MYSQL_PWD``, ``authToken``), or two adjacent parts are api+key,
access+key, private+key, license+key, app+key, auth+key, signing+key, master+key,
account+key, client+secret, encryption+key, server+key, application+key or admin+password. It
is not when its last part describes the secret rather than holding it (count, budget, limit,
length, size, type, kind, url, uri, endpoint, file, path, dir, name, id, arn, ttl, timeout,
expiry, env, var, header, prefix, policy, format, version, field, param, min, max,
regex, pattern, label, hint, placeholder, reset, strength, changed, required, enabled,
validation, help: ``SECRET_NAME``, ``TOKEN_URL``, ``PASSWORD_FILE``) or its first part is max,
min, num or is (``MAX_TOKENS``).

Values. A context rule keeps a value that is obviously not a secret: shorter than 4
characters; a placeholder word (changeme, placeholder, redacted, dummy, example, todo, none,
null, true, false, password, secret, token, test, …); a template or variable (``<your-token>``,
``${VAR}``, ``$VAR``, ``$(cmd)``, ``{{ var }}``, ``%VAR%``, ``{password}``, ``%s``); a run of
mask characters (``xxx``, ``****``, ``...``); ``your_…``; code (a call, a subscript, a dotted
name, the variable's own name: ``token = newToken``); a number of up to 10 digits; or one plain
lower-case word (``password: required``). ``prose_secret`` (and ``bearer_token``) ask more: 8 or
more characters with a digit, three character classes or a long random-looking string, and not
a version, a hash, a file name, a path, a URL or an e-mail address.

Public material. Whatever rule found it, a value that lies wholly inside public material is
kept (``PUBLIC``): a ``-----BEGIN … PUBLIC KEY-----`` block, an OpenSSH public key
(``ssh-ed25519 AAAA…``, ``ecdsa-sha2-nistp256 AAAA…``, a PuTTY key file's
``Public-Lines``), an age recipient (``age1…``), a key
fingerprint (``SHA256:<43>``, ``MD5:``/sixteen hex pairs), a content hash (a Nix store path's
hash, a go.sum ``h1:<base64>=``), a resource identifier (an AWS ARN, an Oracle Cloud OCID, an
IPFS CID, a 40-hex ``0x`` address, a Key Vault object URL). A private key has none of these
shapes, so its block is redacted as before. Nor is a mask a secret, whatever rule found it:
a run of one mask character after a provider's prefix (``ghp_xxxx…``) is kept (``MASKED``).

"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator

from gitvault import lazyre
from gitvault.named import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from typing import Any

Span = tuple[int, int]
SpanOf = Callable[[re.Match[str]], "Span | list[Span] | None"]
"""A rule's value finder: the span to replace, several (a table's column), or None."""


TEXT = -1
"""``Rule.reach``: scan the whole text."""
LINES = 0
"""``Rule.reach``: scan the lines that hold a literal, each with the next line that is not
blank (and the blank lines between)."""


class Rule(NamedTuple):
    """One kind of secret.

    ``literals``: one of them occurs in every match (looked for in the lower-cased text when
    ``folded``), so a text without any of them skips the rule. ``reach`` says what is scanned
    when one does: the whole text (``TEXT``), the lines holding a literal (``LINES``: a match
    starts on such a line and ends by the next line that is not blank), or ``n`` characters
    either side of each literal. ``context``: lower-case words one of which must occur
    anywhere in the text.
    ``after``: a character class that must not come right before the match (a token glued to a
    word is not a token; checked here rather than by a look-behind, which would stop the regex
    engine from searching for the pattern's literal prefix). ``span_of`` picks (and checks) the
    value to replace; without it the group ``secret`` is replaced. ``gated``: the pattern with
    look-aheads that rule out, inside the regex engine, what ``span_of`` would refuse anyway (a
    token that cannot be base64 of text, a URL path without a key word); the filter searches
    with it, ``engine.reference_spans`` with ``pattern`` (a test keeps the two results equal).
    Only where it pays: a look-ahead for a secret word tried at every word of a window (the
    name-bearing rules had one) cost 2-3x the plain search and ``span_of`` refusing the names
    it kept out (bench/secrets/compare.py).
    ``run`` (a rule that reads the whole text): every match lies inside a stretch of at least
    this many characters without whitespace (a long token); only those stretches are scanned.
    """

    kind: str
    pattern: re.Pattern[str]  # compiled at first use (gitvault.lazyre), as every rule here
    literals: tuple[str, ...]
    folded: bool = False
    reach: int = TEXT
    context: tuple[str, ...] = ()
    after: re.Pattern[str] | None = None
    span_of: SpanOf | None = None
    gated: re.Pattern[str] | None = None
    run: int = 0


# ----------------------------------------------------------------------------- value checks

_PLACEHOLDER_WORDS = frozenset(
    {
        "changeme",
        "change_me",
        "change-me",
        "placeholder",
        "redacted",
        "dummy",
        "example",
        "todo",
        "tbd",
        "none",
        "null",
        "nil",
        "undefined",
        "true",
        "false",
        "password",
        "passwd",
        "pass",
        "secret",
        "token",
        "xxx",
        "user",
        "username",
        "string",
        "str",
        "bytes",
        "int",
        "bool",
        "any",
        "optional",
        "required",
        "hidden",
        "masked",
        "sensitive",
        "test",
        "foo",
        "bar",
    }
)
_CODE = lazyre.compile(
    r"(?:\$\{?\w+\}?|\$\(.*|\$\{.*|\$\w+\(.*|(?-i:[A-Z][a-z]+-[A-Z][A-Za-z]+)"
    r"|\{\{.*\}\}|%\w+%|\{[\w.]*\}|%s|%d|%\(\w+\)s|<[^>]*>|(?:env|file|fd):[\w./-]+"
    r"|[\w.]+\(.*\)?|[\w.]+\[.*\]?|[A-Za-z_]+(?:\.[A-Za-z_]+)+|[*x.\u2026\u2022#-]+"
    r"|your[_-].*|\[REDACTED.*|urn:.*|\d{1,10}|[a-z]{1,7})",
    re.IGNORECASE | re.DOTALL,
)
# format fields or a template in the value: "postgres://%s:%s@%s/app", "%(password", "${X}"
_TEMPLATE_INSIDE = lazyre.compile(r"%[sd].*%[sd]|%\(\w+|\$\{|\{\{|\{\w*\}", re.DOTALL)
# a placeholder however it is spelt (``REPLACE_ME``, ``changeme-in-production``), an elided
# value (``sk-ant-...``), a reference to a value held elsewhere (``@db.password@`` filtering,
# a relative file: ``./pw.txt``)
_PLACEHOLDER_VALUE = lazyre.compile(
    r"(?:replace|change|fill|insert|put|set)[_-]?(?:me|it|this)?(?:[_-][a-z]+)*"
    r"|(?:placeholder|dummy|example|sample|redacted|masked|filtered|hidden)(?:[_-][a-z]+)*"
    r"|[^\s.\u2026]*(?:\.{3}|\u2026)|@[\w.-]+@|(?:\.{1,2}|~)/[\w./-]+"
    r"|/[A-Za-z][\w.-]*(?:/[A-Za-z][\w.-]*)+",
    re.IGNORECASE,
)
_IDENTIFIER_VALUE = lazyre.compile(r"[a-z]+(?:_[a-z]+)+")
_PLAIN_WORD = lazyre.compile(r"[A-Z]?[a-z]{1,11}[.,:!]?")
_LOWER_WORD = lazyre.compile(r"[a-z]{1,7}")
_NOT_PROSE_VALUE = lazyre.compile(
    r"v?\d+(?:\.\d+)+\S*|[0-9a-f]{7,31}|[0-9a-f]{40}|[0-9A-F]{16}|[0-9A-F]{40}"
    r"|(?:arn|urn):\S+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[a-z0-9._-]+@[\w.-]+|[\w.-]+@[\w-]+\.[\w.-]*[A-Za-z]|\S*://\S*"
    r"|[\w./-]*/[\w./-]*|[\w-]+\.(?:js|ts|py|md|json|ya?ml|rst|txt)"
    r"|\d{4}-\d{2}-\d{2}[\w.:+-]*"  # a date, a date-led name (a session's slug: 2026-12-01-…)
    r"|[a-z_]\w*(?:\.[a-z_]\w*)+\.[A-Z]\w*"  # a class's full name (``django.….Argon2Hasher``)
)
# in a value said in prose: a letter outside ASCII (a word of the sentence's language), or a
# line break escaped as ``%0A`` (gnupg's messages): text, not a password
_TEXTUAL = lazyre.compile(r"[^\W\d_\x00-\x7f]|%0[AaDd]")
_CLASSES = tuple(lazyre.compile(p) for p in (r"[a-z]", r"[A-Z]", r"\d", r"[^\w]"))
_DIGIT = lazyre.compile(r"\d")
_LETTER = lazyre.compile(r"[a-zA-Z]")


def _entropy(value: str) -> float:
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in Counter(value).values())


_NO_DIGITS = str.maketrans("", "", "0123456789")
_NO_UPPER = str.maketrans("", "", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _digits(ascii_text: str) -> int:
    return len(ascii_text) - len(ascii_text.translate(_NO_DIGITS))


def _upper(ascii_text: str) -> int:
    return len(ascii_text) - len(ascii_text.translate(_NO_UPPER))


def looks_like_value(value: str, strict: bool = False, *, words: bool = False) -> bool:
    """False for placeholders, code and plain words; ``strict`` (prose) wants a password;
    ``words``: a plain word counts as a value (what an assignment to a secret name holds)."""
    v = value.strip("'\"`")
    if len(v) < 4 or v.lower() in _PLACEHOLDER_WORDS:
        return False
    if _CODE.fullmatch(v) and not (words and _LOWER_WORD.fullmatch(v)):
        return False
    if _TEMPLATE_INSIDE.search(v) or _PLACEHOLDER_VALUE.fullmatch(v):
        return False
    if _IDENTIFIER_VALUE.fullmatch(v) and any(
        part in _SECRET_PARTS for part in v.lower().split("_")
    ):
        return False  # an identifier naming a secret (an enum: ``client_secret_basic``)
    if _PLAIN_WORD.fullmatch(v) and not words:  # a plain word: "Updated.", "classic"
        return False
    if not strict:
        return True
    if _hex_text(v) is not None:
        return True  # text written in hex after a secret word: the secret, encoded
    if len(v) < 8 or "<" in v or ">" in v or v.startswith("-"):
        return False
    if not _DIGIT.search(v) and not _lettered_password(v):
        return False
    if _TEXTUAL.search(v):  # words of a language (``MD5認証で…``), an escaped line break (``%0A``)
        return False
    classes = sum(1 for c in _CLASSES if c.search(v))
    if classes < 3 and not (len(v) >= 20 and _LETTER.search(v) and _entropy(v) >= 3.5):
        return False
    if _NOT_PROSE_VALUE.fullmatch(v) and not _random_base64(v):
        return False
    return _entropy(v) >= 2.8


_STRONG_SYMBOL = lazyre.compile(r"[!@#$%^&*?~]")
_CAMEL_WORDS = lazyre.compile(r"[A-Z]?[a-z]{3,}")


def _lettered_password(value: str) -> bool:
    """A generated password without a digit (``AHXtmNOqC~MlbqERCk^z``): 12 or more characters,
    upper and lower case and a symbol no name holds, random rather than words."""
    if len(value) < 12 or not _STRONG_SYMBOL.search(value):
        return False
    if not _PW_CHARS.issuperset(value) or _PW_NOT.search(value) or ".*" in value:
        return False  # a pattern (``(*NO_JIT)hi.*there``), an expression
    if _NAME_END.search(value) or "HEAD" in value:
        return False  # a file or a revision (``HEAD^:one.bin``)
    if not any(c.isupper() for c in value) or not any(c.islower() for c in value):
        return False
    if sum(len(w) for w in _CAMEL_WORDS.findall(value)) > len(value) * 0.5:
        return False
    return _entropy(value) >= 3.5


_BASE64_VALUE = lazyre.compile(r"[A-Za-z0-9+/]{20,}={0,2}")


def _random_base64(value: str) -> bool:
    """Base64 with a ``/`` in it (``WU2P…Cu/2Gau…``) is not a path when its letters read as
    random."""
    return bool(_BASE64_VALUE.fullmatch(value)) and looks_random(re.sub(r"[+/=]", "", value))


_ALNUM_RUN = lazyre.compile(r"[A-Za-z0-9]+")
_WORDISH = lazyre.compile(r"[A-Z]?[a-z]{4,}")
_HUMP = lazyre.compile(r"[A-Z][a-z]{2,}")
_PIECE = lazyre.compile(r"[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+|\d+|[A-Z]")
_HEX_RUN = lazyre.compile(r"[0-9a-f]+|[0-9A-F]+")
_UUID_IN = lazyre.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
# a leading segment that says what a hash or an id is, not what a credential is
_ID_PREFIXES = frozenset(
    {
        "sha",
        "sha1",
        "sha256",
        "sha384",
        "sha512",
        "md5",
        "hash",
        "commit",
        "rev",
        "blob",
        "tree",
        "git",
        "build",
        "run",
        "id",
        "uuid",
        "cache",
        "tmp",
        "temp",
        "chunk",
        "file",
        "v",
        "req",
        "request",
        "trace",
        "span",
        "session",
        "job",
        "task",
        "node",
        "pod",
        "img",
        "image",
        "x",
        "b",
        "g",
        "h",
        "v1",
        "v2",
        "ver",
        "sum",
        "checksum",
        "digest",
        "etag",
        "nonce",
        "salt",
    }
)


# a prefix segment that says "credential" (``shippo_live_<hex>``, ``api-<hex>``)
_SECRETISH_HEADS = frozenset(
    {"live", "test", "prod", "key", "token", "secret", "pat", "api", "sk", "pk", "auth", "pass"}
)


# a UUID after one of these is a credential: LaunchDarkly's sdk-, a key-/api-/secret- prefix
_UUID_KEY_HEADS = frozenset({"sdk", "api", "key", "secret", "token", "sk", "pat", "auth"})


def looks_random(token: str) -> bool:
    """A token that reads as machine-made random text, the way API keys are and identifiers,
    words, versions, hashes and ids are not: 20 or more letters and digits in a few segments,
    every character class of its alphabet well mixed in, no run of word-like letters making up
    much of it. Pure hex (hashes, commit SHAs) counts only after a lettered prefix that is not an
    id's (``live_<hex>``, not ``sha256_<hex>``); UUIDs only after a credential's prefix
    (``sdk-<uuid>``, ``api-<uuid>``: a key, not ``request-<uuid>``)."""
    runs = _ALNUM_RUN.findall(token)
    if not runs:  # no letter or digit at all (a path segment ``:``)
        return False
    uuid = _UUID_IN.search(token)
    if uuid:
        first = _ALNUM_RUN.findall(token[: uuid.start()].lower())[:1]
        rest = token[uuid.end() :]
        ext = not rest or _EXTENSION.fullmatch(rest) is not None
        return ext and bool(first) and first[0] in _UUID_KEY_HEADS
    if runs and runs[0].lower() in _ID_PREFIXES and len(runs[0]) < len(token):
        return False
    if len(runs) > 8 or len(max(runs, key=len)) < 16:
        return _segmented_random(token, runs)
    body = max(runs, key=len)
    if runs[0] is not body and runs[0].lower() in _ID_PREFIXES:
        return False
    heads = {run.lower() for run in runs if len(run) < 8}  # a prefix, a file's extension
    if _HEX_RUN.fullmatch(body):
        head = runs[0].lower() if runs[0] is not body else ""
        return (
            len(body) >= 32
            and head[:1].isalpha()
            and (2 <= len(head) <= 4 or bool(heads & _SECRETISH_HEADS))
            and _digits(body) >= 4
        )
    segments = [run for run in runs if len(run) >= 8]  # the random part
    core = "".join(segments)
    n = len(core)
    if n < (16 if heads else 20):
        return False
    digits = _digits(core)
    upper = _upper(core)
    lower = n - digits - upper
    if upper and lower:  # base62: few word-like runs, not a camel-case name (XftTextRender16LE)
        wordish = sum(len(m) for seg in segments for m in _WORDISH.findall(seg))
        pieces = len(_PIECE.findall(core))  # words, acronyms, numbers: an identifier's are long
        if wordish > n * 0.4 or (digits < 3 and len(_HUMP.findall(core)) >= 3):
            return False
        if n / pieces >= (3.4 if n >= 24 else 4.0):  # 1 random token in 1,000 or fewer
            return False
        enough = digits >= (1 if n >= 24 else 2)  # base64url of 24+ has no digit 1 time in 50
        return enough and upper >= 3 and lower >= 3 and _entropy(core) >= 3.8
    if (upper or lower) and digits:  # base36 of one case
        share = digits / n
        return n >= 24 and 0.15 <= share <= 0.7 and _entropy(core) >= 3.7
    return False


_SEPARATED = lazyre.compile(r"[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)+")


def _segmented_random(token: str, runs: list[str]) -> bool:
    """Base64url text, where ``-`` and ``_`` are letters of the alphabet rather than separators
    (``YCAJEz1EPj-LKi6rTh0pDaT8_``, ``t1.9euelZDSm_xcCx…``): after a short head (``t1.``,
    ``token-``) and without a file's extension, the letters and digits that read as
    random by the base62 test (20 or more), with no run of them a word."""
    parts = token.split(".")
    if len(parts) > 1 and len(parts[-1]) <= 5 and parts[-1].isalpha():
        parts = parts[:-1]  # a file's extension
    tail = max(parts, key=len)
    if not _SEPARATED.fullmatch(tail.strip("-_")):
        return False
    pieces = _ALNUM_RUN.findall(tail)
    while pieces and len(pieces[0]) < 8 and (pieces[0].islower() or pieces[0].isdigit()):
        pieces = pieces[1:]  # a lettered head: token-, bb_live_
    core = "".join(pieces)
    n = len(core)
    if n < 20 or any(_PLAIN_RUN.fullmatch(piece) for piece in pieces):
        return False
    digits = _digits(core)
    upper = _upper(core)
    lower = n - digits - upper
    wordish = sum(len(m) for m in _WORDISH.findall(core))
    if wordish > n * 0.4 or n / len(_PIECE.findall(core)) >= 3.4:
        return False
    enough = digits >= (1 if n >= 24 else 2)
    return enough and upper >= 3 and lower >= 3 and _entropy(core) >= 3.8


_PLAIN_RUN = lazyre.compile(r"[a-z]{3,}|[A-Z][a-z]{2,}")  # a word among the pieces


# a hash's label right before the token: ``sha256=…`` (a wheel's RECORD), ``"integrity":
# "sha512-…"``, ``md5: …``
_HASH_LABEL = lazyre.compile(
    r"(?i)(?:sha\d*|md5|hash|digest|checksum|integrity|blake2\w*|etag)[\"']?\s*[=:-]?\s*[\"']?$"
)


def _in_base64_blob(text: str, start: int, end: int) -> bool:
    """The token is a piece of standard base64 (an integrity hash, a wheel RECORD line): the run
    of base64 characters around it holds a ``+``, or ``/`` between two long pieces, or a hash's
    label stands before it; or it follows a ``$`` (a crypt hash: ``$2b$12$…``)."""
    left = start
    while left > 0 and (text[left - 1].isalnum() or text[left - 1] in "+/"):
        left -= 1
    if left and text[left - 1] == "$" or _HASH_LABEL.search(text, max(0, left - 16), left):
        return True
    right = end
    while right < len(text) and (text[right].isalnum() or text[right] in "+/"):
        right += 1
    blob = text[left:right]
    if "+" in blob:
        return True
    return "/" in blob and sum(1 for piece in blob.split("/") if len(piece) >= 12) > 1


# a public value's name right before the token: ``"publicKey": "…"``, ``PUBLISHABLE_KEY=…``
_PUBLIC_NAME = lazyre.compile(r"(?i)(?:public|publishable)[\w.-]*[\"']?\s*[:=]\s*[\"']?$")


def _random_token(match: re.Match[str]) -> Span | None:
    start, end = match.span()
    text = match.string
    decoded = _hex_text(match.group())  # hex of text holding a secret: ``echo 6768705f… | xxd``
    if decoded is not None and FINDERS and FINDERS[0](decoded):
        return start, end
    if not _DIGIT_OR_UUID.search(match.group()):  # what every branch of looks_random wants
        return None
    if not looks_random(match.group()) or _in_base64_blob(text, start, end):
        return None
    if _PUBLIC_NAME.search(text, max(0, start - 40), start):
        return None
    if _decoded_text(match.group()) is not None:
        return None  # base64 of text: base64_secret looks inside it
    ext = _EXTENSION.search(match.group())
    if ext and looks_random(match.group()[: ext.start()]):
        end = start + ext.start()  # a file's name: its extension is kept
    return start, end


# password_shaped: what a generated password is made of, and what else such a token can be
_PW_STRONG = frozenset("!@#$%^&*?~")
_PW_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!@#$%^&*?~+=._-:"
)
_PW_KEY = lazyre.compile(r"[^:=]{1,60}[:=]")  # a ``name=``, ``user:``, ``user@host:`` before it
_PW_WORDISH = lazyre.compile(r"[A-Z]?[a-z]{4,}|[A-Z]{4,}")
# what the whole token is when it is none (an expression, a glob, a URL, a path, an ARN)
_PW_NOT_TOKEN = lazyre.compile(r"\*\*|^(?:arn|urn):|^[-~#*]|\*$|::")
# what the value is when it is none (a character class, a query, an anchor, an entity, escapes)
_PW_NOT = lazyre.compile(
    r"a-z|A-Z|0-9|a-f|A-F|^[-~#*$%=&?]|\*$|\?[a-z_]+=|^\d+\*"
    r"|\*\w+\.|\w\.\w+\*|#[Ll]\d|&[a-z]+$|\*=|@[A-Za-z]+$|::"
    r"|%[0-9A-Fa-f]{2}.*%[0-9A-Fa-f]{2}|=[0-9A-F]{2}.*=[0-9A-F]{2}|://|[/\\]"
    r"|\$\{?(?:[A-Z_]{4,}|\w*_\w*_)"  # a shell variable (``-$__git_SOH``, ``$GIT_PERF_…``)
)
_PW_EMAIL = lazyre.compile(r"@[A-Za-z0-9-]+\.[A-Za-z]{2,}")
_PW_NAME = lazyre.compile(r"[A-Za-z_][\w.-]{2,}=")  # a variable or key and its ``=``


_PW_REACH = 64  # characters a password-shaped token (or a path's name) holds at most
_PW_CRYPT = lazyre.compile(r"\$[0-9a-z]{1,12}\$")
_PW_SEPARATORS = " \t\n\r\f\v'\"`<>()[]{},;|"
_PW_TOKEN_REST = lazyre.compile(r"[^\s'\"`<>()\[\]{},;|]*")


def _password_shaped(match: re.Match[str]) -> Span | None:
    """A generated password standing alone (``L@5#57…``, ``user:xMZ=R%…``): measured on the
    benign corpora (0 of 66,000 lines), 85,000 real commit messages (2: quoted binary patches)
    and 5.5 M lines of code (~50, most of them an encoder's random test vectors), it needs
    every class and a symbol no identifier, number or hash holds; base64 (``+ / =`` only) is
    left to base64_secret, a hash to the rules that know it. The match is one such symbol; the token
    is what stands around it between spaces, quotes, brackets and commas."""
    text, at = match.string, match.start()
    # Both scans are bounded, so a long run of symbols costs each of them a few steps, not
    # the run's length (100,000 ``#`` took 31 s with the right scan unbounded).
    limit = min(len(text), at + _PW_REACH + 1)
    rest = _PW_TOKEN_REST.match(text, at, limit)  # (matches at least the empty string)
    end = rest.end() if rest else at
    if end == limit and limit < len(text) and text[limit] not in _PW_SEPARATORS:
        return None  # longer than any password (a path's folders come before its name)
    start, stop = at, max(0, at - 256)
    while start > stop and text[start - 1] not in _PW_SEPARATORS:
        start -= 1
    if _PW_CRYPT.search(text, max(0, start - 64), end):
        return None  # a password hash (``$argon2id$v=19$m=…,p=1$salt$hash``, ``$6$…``)
    if "/" in text[start:end] or "\\" in text[start:end]:
        # a path: only the name holding the symbol (a file named for a password), never a
        # URL's (the most common long token with a ``#`` or ``@``)
        if "://" in text[start:end]:
            return None
        start = max(text.rfind("/", start, at), text.rfind("\\", start, at)) + 1 or start
        cuts = [i for i in (text.find("/", at, end), text.find("\\", at, end)) if i >= 0]
        end = min(cuts, default=end)
    if not 10 <= end - start <= 64 or (start and text[start - 1] not in _PW_SEPARATORS + "/\\"):
        return None  # too short, or longer than 64 characters: not a password
    token = text[start:end]
    if _PW_NOT_TOKEN.search(token):
        return None
    ext = _EXTENSION.search(token)
    if ext and ext.start() >= 10 and text[start - 1 : start] in ("/", "\\"):
        end, token = start + ext.start(), token[: ext.start()]  # a file's name: its extension kept
    key = _PW_KEY.match(token)
    # after ``NAME=`` only the value can be the password (``LC_ALL=$a_utf8_locale`` is none)
    if key is None:
        offsets: tuple[int, ...] = (0,)
    elif _PW_NAME.fullmatch(token, 0, key.end()):
        offsets = (key.end(),)
    else:  # ``user:password`` (the value alone first), or a password holding a ``:``
        offsets = (key.end(), 0)
    for offset in offsets:
        value = token[offset:]
        if not 10 <= len(value) <= 48 or _PW_NOT.search(value) or _PW_EMAIL.search(value):
            continue
        if not _PW_CHARS.issuperset(value):
            continue
        digits = _digits(value)
        upper = _upper(value)
        lower = sum(1 for c in value if "a" <= c <= "z")
        if digits < 1 or upper < 2 or lower < 2 or not _PW_STRONG.intersection(value):
            continue
        if sum(len(w) for w in _PW_WORDISH.findall(value)) > len(value) * 0.35:
            continue
        if _entropy(value) >= 3.3:
            return start + offset, end
    return None


_EXTENSION = lazyre.compile(r"(?:\.[A-Za-z][A-Za-z0-9]{0,4})+$")
_DIGIT_OR_UUID = lazyre.compile(r"\d|[a-fA-F]{8}-[a-fA-F]{4}-[a-fA-F]{4}-")


def _decodes_to_user_password(value: str) -> bool:
    try:
        return b":" in base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False


def _value(strict: bool = False) -> SpanOf:
    def span_of(match: re.Match[str]) -> Span | None:
        return match.span("secret") if looks_like_value(match["secret"], strict) else None

    return span_of


# "password" in other languages (a chat, a ticket, a commit message written in one), and the
# words that say "is" in them; the value after one gets prose_secret's strict test
_PASSWORD_WORDS = (
    # words that inflect (lösenordet, passordet, hasła, пароля, şifresi): a few letters more
    r"(?:passwort|kennwort|mot\s+de\s+passe|contrase[\u00f1n]a|clave|senha|wachtwoord"
    r"|l[\u00f6o]senord|passord|adgangskode|salasana|has[\u0142l]|heslo|jelsz[\u00f3oa]"
    r"|paro+l|palavra[\s-]passe|[\u0161s]ifr[ae]|[\u015fs]\u00eefr|facal[\s-]faire|ger[\s-]tremen"
    r"|loynior[\u00f0d]|modpas|wachtwurd|tembung\s+sandh?i|erayga\s+sirta|furaha\s+sirta"
    r"|ijambo\s+ry.ibanga|kupuhipa|teny\s+miafina|okwuntughe|phasewete|\u067e\u067c\u0646\u0648\u0645|api[\s_-]?(?:sleutel|schl\u00fcssel|nyckel|n\u00f8gle|avain|klucz"
    r"|kl\u00ed\u010d|chiave|\u043a\u043b\u044e\u0447)|salas\u00f5n|pasfhocal|fjal\u00ebkalim|pasvort|passwuert|iphasiwed|kalmar\s+sirri"
    r"|\u049b\u04b1\u043f\u0438\u044f\s+\u0441\u04e9\u0437|\u043d\u0443\u0443\u0446\s+\u04af\u0433"
    r"|\u0441\u044b\u0440\u0441\u04e9\u0437|\u6697\u8a3c\u756a\u53f7"
    r"|\u0c2a\u0c3e\u0c38\u0c4d\u200c?\u0c35\u0c30\u0c4d\u0c21\u0c4d|\u0caa\u0cbe\u0cb8\u0ccd\u200c?\u0cb5\u0cb0\u0ccd\u0ca1\u0ccd"
    r"|\u0d2a\u0d3e\u0d38\u0d4d\u200c?\u0d35\u0d47\u0d21\u0d4d|\u043f\u0430\u0440\u043e\u043b|[\u015fs]ifre|\u03ba\u03c9\u03b4\u03b9\u03ba"
    r"|m[\u1eada]t\s+kh[\u1ea9a]u|kata\s+sandi|kata\s+laluan|contrasenya|contrasinal|pasahitz"
    r"|nenosiri|lozink|\u043b\u043e\u0437\u0438\u043d\u043a|geslo|slapta\u017eod|lykilor"
    r"|cyfrinair|wagwoord|[\u015fs]ifr\u0259)[^\W\d_]{0,5}"
    # scripts without spaces or inflection at the word's end: Chinese, Japanese, Korean, Thai,
    # Hindi, Arabic, Hebrew
    r"|\u5bc6\u7801|\u5bc6\u78bc|\u53e3\u4ee4|\u30d1\u30b9\u30ef\u30fc\u30c9|\ube44\ubc00\ubc88\ud638"
    r"|\u0e23\u0e2b\u0e31\u0e2a\u0e1c\u0e48\u0e32\u0e19|\u092a\u093e\u0938\u0935\u0930\u094d\u0921"
    r"|\u05e1\u05d9\u05e1\u05de\u05d4|\u0643\u0644\u0645\u0629\s+(?:\u0627\u0644\u0645\u0631\u0648\u0631|\u0627\u0644\u0633\u0631)"
    # Persian, Urdu, Bengali, Tamil, Gujarati, Punjabi, Georgian, Armenian, Sinhala, Burmese,
    # Khmer, Lao, Amharic, and Hebrew's other spelling
    r"|\u0631\u0645\u0632\s+\u0639\u0628\u0648\u0631|\u06af\u0630\u0631\u0648\u0627\u0698\u0647"
    r"|\u067e\u0627\u0633\s?\u0648\u0631\u0688|\u09aa\u09be\u09b8\u0993\u09af\u09bc\u09be\u09b0\u09cd\u09a1"
    r"|\u0b95\u0b9f\u0bb5\u0bc1\u0b9a\u0bcd\u0b9a\u0bca\u0bb2\u0bcd|\u0aaa\u0abe\u0ab8\u0ab5\u0ab0\u0acd\u0aa1"
    r"|\u0a2a\u0a3e\u0a38\u0a35\u0a30\u0a21|\u10de\u10d0\u10e0\u10dd\u10da|\u0563\u0561\u0572\u057f\u0576\u0561\u0562\u0561\u057c"
    r"|\u0db8\u0dd4\u0dbb\u0db4\u0daf|\u1005\u1000\u102c\u1038\u101d\u103e\u1000\u103a"
    r"|\u1796\u17b6\u1780\u17d2\u1799\u179f\u1798\u17d2\u1784\u17b6\u178f\u17cb|\u0ea5\u0eb0\u0eab\u0eb1\u0e94\u0e9c\u0ec8\u0eb2\u0e99"
    r"|\u12e8\u12ed\u1208\u134d\s\u1243\u120d|\u05e1\u05d9\u05e1\u05de\u05d0"
)
_PASSWORD_LITERALS = (
    *(
        # (not "pass": every "password" line would be searched for other languages' words)
        "passwort",
        "passord",
        "mot de passe",
        "kennwort",
        "contrase",
        "clave",
        "senha",
        "wachtwoord",
        "senord",
    ),
    *("adgangskode", "salasana", "has\u0142", "hasl", "heslo", "jelsz", "parol"),
    *(
        "\u043f\u0430\u0440\u043e\u043b",
        "\u5bc6\u7801",
        "\u5bc6\u78bc",
        "\u53e3\u4ee4",
        "\u30d1\u30b9\u30ef\u30fc\u30c9",
        "\ube44\ubc00\ubc88\ud638",
    ),
    *(
        "\u015fifre",
        "sifre",
        "\u03ba\u03c9\u03b4\u03b9\u03ba",
        "\u05e1\u05d9\u05e1\u05de\u05d4",
        "\u0643\u0644\u0645\u0629",
        "kh\u1ea9u",
        "khau",
    ),
    *(
        "kata laluan",
        "contrasenya",
        "contrasinal",
        "pasahitz",
        "nenosiri",
        "lozink",
        "\u043b\u043e\u0437\u0438\u043d\u043a",
        "geslo",
        "slapta\u017eod",
        "lykilor",
        "cyfrinair",
        "wagwoord",
        "ifr\u0259",
        "\u0631\u0645\u0632",
        "\u06af\u0630\u0631\u0648\u0627\u0698\u0647",
        "\u067e\u0627\u0633",
        "\u09aa\u09be\u09b8\u0993\u09af\u09bc\u09be\u09b0\u09cd\u09a1",
        "\u0b95\u0b9f\u0bb5\u0bc1\u0b9a\u0bcd\u0b9a\u0bca\u0bb2\u0bcd",
        "\u0aaa\u0abe\u0ab8\u0ab5\u0ab0\u0acd\u0aa1",
        "\u0a2a\u0a3e\u0a38\u0a35\u0a30\u0a21",
        "\u10de\u10d0\u10e0\u10dd\u10da",
        "\u0563\u0561\u0572\u057f\u0576\u0561\u0562\u0561\u057c",
        "\u0db8\u0dd4\u0dbb\u0db4\u0daf",
        "\u1005\u1000\u102c\u1038\u101d\u103e\u1000\u103a",
        "\u1796\u17b6\u1780\u17d2\u1799\u179f\u1798\u17d2\u1784\u17b6\u178f\u17cb",
        "\u0ea5\u0eb0\u0eab\u0eb1\u0e94\u0e9c\u0ec8\u0eb2\u0e99",
        "\u12e8\u12ed\u1208\u134d",
        "\u05e1\u05d9\u05e1\u05de\u05d0",
        "kata sandi",
        "parool",
        "\u0161ifr",
        "\u00eefr",
        "facal",
        "ger-tremen",
        "ger tremen",
        "loynior",
        "modpas",
        "wachtwurd",
        "tembung",
        "sirta",
        "ibanga",
        "kupuhipa",
        "miafina",
        "okwuntughe",
        "phasewete",
        "\u067e\u067c\u0646\u0648\u0645",
        "palavra",
        "sleutel",
        "schl\u00fcssel",
        "nyckel",
        "n\u00f8gle",
        "avain",
        "klucz",
        "kl\u00ed\u010d",
        "chiave",
        "\u043a\u043b\u044e\u0447",
        "salas\u00f5n",
        "pasfhocal",
        "fjal\u00ebkalim",
        "pasvort",
        "passwuert",
        "iphasiwed",
        "kalmar sirri",
        "\u049b\u04b1\u043f\u0438\u044f",
        "\u043d\u0443\u0443\u0446",
        "\u0441\u044b\u0440\u0441\u04e9\u0437",
        "\u6697\u8a3c\u756a\u53f7",
        "\u0c2a\u0c3e\u0c38\u0c4d",
        "\u0caa\u0cbe\u0cb8\u0ccd",
        "\u0d2a\u0d3e\u0d38\u0d4d",
        "\u0e23\u0e2b\u0e31\u0e2a\u0e1c\u0e48\u0e32\u0e19",
        "\u092a\u093e\u0938\u0935\u0930\u094d\u0921",
    ),
)
_COPULAS = (
    r"ist|lautet|war|est|\u00e9tait|es|era|\u00e9|\u00e4r|er|var|on|jest|je|\u00e9s|\u00e8"
    r"|\u03b5\u03af\u03bd\u03b1\u03b9|l\u00e0|adalah|\u044d\u0442\u043e"
)
_CJK = r"\u3000-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef"
_CJK_COPULAS = r"\u662f|\u4e3a|\u70ba|\u306f|\ub294|\uc740"
# what follows a secret word in prose: a parenthesis, a few words and "is" (in any of these
# languages), ":", "=", "->", a dash, or only a space; then the value (a CJK character ends
# it: no space comes before the sentence goes on)
_PROSE_VALUE = (
    r"(?P<secret>[^\s'\"`,;()=:" + _CJK + r"](?:[^\s'\"`,;()&" + _CJK + r"]|&(?![\w-]+=)){7,})"
)
_PROSE_TAIL = (
    r"(?:\s*\([^)\n]{0,30}\))?(?:[^\n.;`'\"]{0,40}?(?:\b(?:is|was|to|are)\b|[:=]|->)"
    r"|\s*[:=]|\s*->|(?=\s))\s*['\"`]?" + _PROSE_VALUE
)
_FOREIGN_PROSE_TAIL = (
    r"(?:\s*\([^)\n]{0,30}\))?(?:[^\n.;`'\"]{0,40}?(?:\b(?:is|was|to|are|" + _COPULAS + r")\b"
    r"|[:=\uff1a\u2013\u2014]|->|" + _CJK_COPULAS + r")|\s*[:=\uff1a]|\s*->|(?=\s))\s*"
    r"['\"`\u300c\u00ab]?" + _PROSE_VALUE
)
_NEXT_VALUE = lazyre.compile(r"\s+['\"`]?([^\s'\"`,;()=:](?:[^\s'\"`,;()&]|&(?![\w-]+=)){7,})")


def _prose(match: re.Match[str]) -> Span | None:
    """The value a secret word leads to in prose (strict test). When the value the pattern
    reached across other words (``key … (s:2026-…)``) is none, the word right after the secret
    word may be (``--key EXO1e02…``)."""
    if match.string.startswith("(", match.end("secret")):
        return None  # a call: ``argon2.hash(password)``
    if match["word"].lower() == "key" and (
        _word_before(match.string, match.start("word")) in _NOT_SECRET_KEYS
    ):
        return None  # ``cache key: …``
    if looks_like_value(match["secret"], strict=True) or passphrase(match["secret"]):
        return match.span("secret")
    if _hex_key(match["word"], match["secret"]):
        return match.span("secret")
    near = _NEXT_VALUE.match(match.string, match.end("word"))
    if near and near.start(1) < match.start("secret") and looks_like_value(near[1], strict=True):
        return near.span(1)
    return None


_KEY_WORD = lazyre.compile(
    r"(?i)token|key|sleutel|schl\u00fcssel|nyckel|n\u00f8gle|avain|klucz|kl\u00ed\u010d|chiave"
    r"|\u043a\u043b\u044e\u0447"
)
_HEX_KEY = lazyre.compile(r"(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{20,64}")


def _hex_key(word: str, value: str) -> bool:
    """Hex where a word for a token or an API key points (``API-sleutel … is 4052a5…``): the
    key, even at a commit id's length (a commit is never called a key)."""
    return bool(_KEY_WORD.search(word)) and _HEX_KEY.fullmatch(value.rstrip(".,")) is not None


def _said_password(match: re.Match[str]) -> Span | None:
    """A word for a password in an English sentence whose "is" is not English or not there
    (``la pass es …``, ``password SSH server staging sekarang …``, ``new one is … .``): the
    first token of the rest of the line, within reach, made as passwords are (as for a word in
    another language)."""
    text, end = match.string, match.end("word")
    if not text[end : end + 1].isspace() or text[end:].lstrip(" \t")[:1] in ("=", ":", "-"):
        return None  # an assignment, a key, a flag: the rules that read those decide
    return _line_scan(text, end)


_QUERY_PAIR = lazyre.compile(r"&[\w-]+=")
_HOSTNAME = lazyre.compile(r"[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}(?::\d+)?|\d+(?:\.\d+){3}(?::\d+)?")


def _line_scan(text: str, end: int) -> Span | None:
    stop = min(len(text), end + FOREIGN_REACH)
    line_end = text.find("\n", end, stop)
    stop = stop if line_end < 0 else line_end
    for token in _LINE_TOKEN.finditer(text, end, stop):
        value = token.group().rstrip(".:\u3002\u060c\u0964")  # a sentence's end, not the value's
        if text.startswith("(", token.end()) or _QUERY_PAIR.search(value):
            continue  # a call (``argon2.hash(password)``), a query (``email&page=2``)
        if _HOSTNAME.fullmatch(value.lstrip("=:@")) or _PASSPHRASE_NOT.fullmatch(value):
            continue  # a host (``mysql-ro.acme.internal:3306``), a version (``OAuth2.0``)
        if _PASSPHRASE_NAMES.search(value):
            continue  # an encoding, a platform (``iso-8859-1``)
        start = token.start() + len(value) - len(value := value.lstrip("=:"))  # ``=`` is not it
        if _scanned_value(value) and made_as_password(value):
            return start, start + len(value)
    return None


_FOREIGN_TAIL = lazyre.compile(_FOREIGN_PROSE_TAIL)
_A_PASSWORD_WORD = lazyre.compile(r"(?i)(?:" + _PASSWORD_WORDS + r"|pass(?:word|phrase)?s?)")
_LINE_TOKEN = lazyre.compile(r"[^\s'\"`,;()\u00ab\u00bb\u300c\u300d]+")
FOREIGN_REACH = 80  # characters after a word for "password" searched for the password


def _foreign_prose(match: re.Match[str]) -> Span | None:
    """The value after a word for "password" in another language: where "is" stands (when
    this language's word for it is known), else the first token of the rest of the line
    that passes the strict test, whatever words come between or after it (``رمز عبور سرور
    تست <value> است``: Persian puts "is" last; Swahili ``ni``, Bengali ``হল``)."""
    text, end = match.string, match.end("word")
    tail = _FOREIGN_TAIL.match(text, end)
    if tail is not None and (
        looks_like_value(tail["secret"], strict=True)
        or passphrase(tail["secret"].rstrip(".!?"))
        or _hex_key(match["word"], tail["secret"])
    ):
        return tail.span("secret")
    return _line_scan(text, end)


def _scanned_value(value: str) -> bool:
    """A token met on the way, not where "is" points: a password by the strict test, and
    made as passwords are, not as names and words are (``1Password``, ``SOCKSv5-protokollen``,
    ``ISO-8859-1``, ``%.4s``, an escaped ``\\u00fc``), or a passphrase (``river+falcon1971``)."""
    if passphrase(value):
        return True
    if not looks_like_value(value, strict=True) or "%" in value or "\\" in value:
        return False
    if not any("a" <= c <= "z" for c in value):
        return False
    return sum(len(w) for w in _LONG_WORD.findall(value)) <= len(value) * 0.35


# a password made of words, as people and generators make them to remember: words (or words
# with letters swapped for digits: ``54ffr0n``) joined by a symbol, with a number in it
# (``saffron~river999``, ``ostrich-falcon-walnut-walnut-9``, ``harbor_ember352``, ``N1mbu5*1``)
_PASSPHRASE = lazyre.compile(r"[A-Za-z0-9]{2,}(?:[-_~+.*!@#$&][A-Za-z0-9]{1,}){1,7}[-_~+.*!@#$&]?")
_NUMBERED_NAME = lazyre.compile(r"[a-z]+(?:_[a-z]+)*_\d+")  # ``remote_get_1``: a function's
_NON_UNDERSCORE = lazyre.compile(r"[-~+.*!@#$&]")
_HUMPED = lazyre.compile(r"[a-z][A-Z]")  # a name in camel case (``Argon2PasswordHasher``)
# what ends a host's or a file's name: ``.com``, ``.internal``, ``.zip``, ``.7z``, ``.mp3``
_NAME_END = lazyre.compile(r"\.(?:[A-Za-z]+|[A-Za-z][A-Za-z0-9]{0,3}|\d[A-Za-z]{1,3})$")
_ACRONYM_VERSION = lazyre.compile(r"[A-Z]{2,}[a-z]?\d")  # ``SOCKSv5``, ``IPv6``, ``HTTP2``, ``MP3``
_PASSPHRASE_NOT = lazyre.compile(r"v?\d+(?:[._-]\w+)*|[\w-]*\d+\.\d+[\w.-]*")  # a version
# a platform, an encoding, a standard, a toolchain: a part of a name, never of a password
_PASSPHRASE_NAMES = lazyre.compile(
    r"(?i)(?<![a-z])(?:x86|amd64|arm64|aarch64|i[36]86|utf|iso|sha|md5|rfc|cve|ghsa|pep|python"
    r"|py|node|java|jdk|gcc|clang|llvm|win|ubuntu|debian|lts|ssh|rsa|dsa|ecdsa|ed25519|x25519"
    r"|aes|gcm|cbc|hmac|lib|macos|linux|darwin|ios|android|react|vue|next|prod|staging|dev"
    r"|test|input|type|field)(?![a-z])"
)


def made_as_password(value: str) -> bool:
    """A value found near a word for password (not where "is" points) or beside a login name,
    made as people and generators make passwords: a symbol no name holds (``!@#$%^&*?~+``);
    upper and lower case, a digit and a separator (``W4lnut_1``, ``Tango.topaz9704``); or
    three or more words and a number (``walnut-willow-lagoon-9``), or words with a number glued
    to the last (``harbor_ember352``). Not a name with a number (``macos-14``, ``vault-prod-1``,
    ``input-type-3``), a key type (``ssh-ed25519``), an issue (``Bug#53857``), camel case."""
    if _ISSUE_REF.search(value) or _PASSPHRASE_NAMES.search(value):
        return False
    if not _DIGIT.search(value) and not _lettered_password(value):
        return False
    if value.isalnum() and sum(len(w) for w in _CAMEL_WORDS.findall(value)) > len(value) * 0.5:
        return False  # a name in camel case (``Argon2PasswordHasher``)
    if _MADE_STRONG.search(value):
        return True
    upper = any(c.isupper() for c in value)
    lower = any(c.islower() for c in value)
    if upper and lower and (not value.isalnum() or len(value) >= 12 and _entropy(value) >= 3.5):
        return True
    if _NAME_END.search(value) or not passphrase(value):
        return False
    words = _WORD_PART.findall(value)
    return len(words) >= 3 or bool(_GLUED_NUMBER.search(value))


_MADE_STRONG = lazyre.compile(r"[!@#$%^&*?~+]")
_ISSUE_REF = lazyre.compile(r"(?i)(?:bug|issue|pr|gh|ticket)?#\d+$")
_WORD_PART = lazyre.compile(r"[A-Za-z]{3,}")
_GLUED_NUMBER = lazyre.compile(r"[A-Za-z]{3,}\d+[-_~+.*!@#$&]?$")


def passphrase(value: str) -> bool:
    """A password of words and a number joined by symbols, where a secret word points: 8 to
    64 characters, letters and a digit, never only a version, a platform or a standard's name
    (``v2.1.0``, ``x86_64-linux``, ``utf-8``, ``CVE-2024-1234``, ``SOCKSv5-protocol``), a name
    in snake or kebab case without a digit, or a date."""
    if not 8 <= len(value) <= 64 or not _PASSPHRASE.fullmatch(value):
        return False
    if not _DIGIT.search(value) or not _LETTER.search(value) or _PASSPHRASE_NOT.fullmatch(value):
        return False
    if _ACRONYM_VERSION.search(value) or _PASSPHRASE_NAMES.search(value) or _HUMPED.search(value):
        return False
    if _NAME_END.search(value) or _NUMBERED_NAME.fullmatch(value):
        return False
    if "_" in value and not _NON_UNDERSCORE.search(value) and not value[-1].isdigit():
        return False  # ``tr2tls_thread_main``: a name in snake case, not ended by a number
    if _NOT_PROSE_VALUE.fullmatch(value) or value.lower() in _PLACEHOLDER_WORDS:
        return False
    return sum(c.isalpha() for c in value) >= 3 and any("a" <= c <= "z" for c in value)


_LONG_WORD = lazyre.compile(r"[A-Z]?[a-z]{6,}")  # a word (``Password``), not ``Marble``


def _user_password(match: re.Match[str]) -> Span | None:
    """``curl -u user:secret``, ``-auth user:secret``; with an empty or ``X`` password (an API
    key given as the user: ``curl -u KEY:X``) the user is the secret when it reads as one."""
    secret = match["secret"]
    if len(secret) >= 6:
        return match.span("secret") if looks_like_value(secret) else None
    if len(secret) > 1:
        return None
    user = match["user"]
    ok = looks_random(user) or _HEXISH.fullmatch(user) or looks_like_value(user, strict=True)
    return match.span("user") if ok else None


_USER_NAME = lazyre.compile(r"[A-Za-z][\w.+-]*(?:@[\w.-]+)?")


def _slashed_pair(match: re.Match[str]) -> Span | None:
    """``admin@acme.dev / ~1uqQ4Gh7IeGT``, ``qa-admin / W4lnut_1``, ```sales-demo` / `…```: a
    user and a password told together, with no word for either; the user reads as a login
    name, the password is made as passwords are (strict test, or a passphrase)."""
    user, value = match["user"], match["secret"].rstrip(".:`'\"")
    if not _USER_NAME.fullmatch(user) or _NOT_PROSE_VALUE.fullmatch(user.split("@")[0]):
        return None
    if not any("a" <= c <= "z" for c in user):
        return None  # an advisory, a ticket (``CVE-2025-9820 / GNUTLS-SA-…``)
    if not (_scanned_value(value) and not _NOT_PROSE_VALUE.fullmatch(value)):
        return None
    if not made_as_password(value):
        return None
    if _PASSPHRASE_NAMES.search(value):
        return None  # ``'latin1' / 'iso-8859-1'``: two names of one thing
    start = match.start("secret")
    return start, start + len(value)


def _sql_password(match: re.Match[str]) -> Span | None:
    """``PASSWORD '…'``; ``IDENTIFIED BY '…'`` or, as Oracle quotes it, ``IDENTIFIED BY "…"``."""
    group = next(g for g in ("secret", "by", "dq") if match[g] is not None)
    return match.span(group) if looks_like_value(match[group]) else None


def _char_array(match: re.Match[str]) -> Span | None:
    """A password kept as a character array (Java's ``char[]``, C's ``char pw[] = {…}``)."""
    return match.span("secret") if is_secret_name(match["name"]) else None


def _pgpass(match: re.Match[str]) -> Span | None:
    """The password field of a ``.pgpass`` line: the line itself holds the port (``:5432:``)
    or a wildcard field (``:*:``)."""
    line = match.group()
    if ":5432:" not in line and ":*:" not in line:
        return None
    return match.span("secret") if looks_like_value(match["secret"], words=True) else None


_CALLEE_NAME = lazyre.compile(r"[A-Za-z_][\w.:]{0,60}")
_LOOKUP_CALLEE = lazyre.compile(
    r"(?i)(?:^|[._:])(?:get\w*|env\w*|\w*environ|read\w*|load\w*|lookup|ref|secret\w*|vault\w*"
    r"|require\w*|fetch|hash\w*|encrypt\w*|sha\d*|md5|bcrypt|argon2\w*|t|_|gettext|i18n|tr"
    r"|\w*compile|regexp?|pattern|mustcompile|glob|path|url\w*|\w*config\w*|\w*setting\w*)$"
)


_WRAPPED_LITERAL = lazyre.compile(
    r"[ \t]*[bru]?(?P<q>['\"])(?P<secret>[^'\"\n]{4,200})(?P=q)[ \t]*(?:,[^()\n]{0,80})?\)"
)


def _wrapped(text: str, at: int, callee: str) -> Span | None:
    """A secret name set to one literal wrapped in a call (``AccessKeySecret:
    tea.String("…")``, ``password: Some("…")``, ``codecs.decode('…', 'rot13')``): the literal,
    when the call is no lookup (``os.getenv("DB_PASSWORD")``, ``secret("db")``), hash, pattern
    or translation, and the literal is made as passwords or keys are, not a key's name."""
    found = _WRAPPED_LITERAL.match(text, at, min(len(text), at + 400))
    if found is None or _LOOKUP_CALLEE.search(callee):
        return None
    value = found["secret"]
    if _ENV_NAME.fullmatch(value) or _NOT_PROSE_VALUE.fullmatch(value):
        return None
    if is_secret_name(value.replace("-", "_")):
        return None  # a key's name (``gitConfig("git-p4.password")``)
    ok = looks_like_value(value, strict=True) or made_as_password(value) or looks_random(value)
    return found.span("secret") if ok else None


def _net_use(match: re.Match[str]) -> Span | None:
    """``net use``'s password: not a variable (``$env:PASS``, ``%PASS%``) or a prompt (``*``)."""
    value = match["secret"]
    if value[:1] in ("$", "%", "*") or not looks_like_value(value, words=True):
        return None
    return match.span("secret")


def _community(match: re.Match[str]) -> Span | None:
    """An SNMP community (its password): not the well-known defaults, not a placeholder."""
    value = match["secret"]
    if value.lower() in ("public", "private") or _FLAG_PLACEHOLDER.fullmatch(value):
        return None  # the defaults, a placeholder (``COMMUNITY``)
    return match.span("secret") if looks_like_value(value, words=True) else None


def _sql_setting(match: re.Match[str]) -> Span | None:
    """``UPDATE settings SET value = '…' WHERE key = 'smtp.password'``, ``INSERT … VALUES
    ('smtp.password', '…')``: a value stored under a secret's name."""
    name, group = (
        (match["name"], "secret") if match["name"] is not None else (match["vname"], "vsecret")
    )
    value = match[group]
    if not is_secret_name(name) or " " in value or not looks_like_value(value):
        return None
    return match.span(group)


def _basic(match: re.Match[str]) -> Span | None:
    value = match["secret"]
    ok = _decodes_to_user_password(value) and looks_like_value(value)
    return match.span("secret") if ok else None


def _bearer(match: re.Match[str]) -> Span | None:
    """16 or more characters with a digit; 8 or more right after ``Authorization:``."""
    value = match["secret"]
    if len(value) < 16:
        before = match.string[max(0, match.start() - 20) : match.start()].lower()
        if "authorization" not in before:
            return None
    ok = _DIGIT.search(value) is not None and looks_like_value(value)
    return match.span("secret") if ok else None


def _auth_base64(match: re.Match[str]) -> Span | None:
    return match.span("secret") if _decodes_to_user_password(match["secret"]) else None


# ----------------------------------------------------------------------------- secret names

_NAME_PART = lazyre.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SECRET_PARTS = frozenset(
    {
        "password",
        "passwd",
        "pass",
        "passphrase",
        "pwd",
        "pw",
        "secret",
        "token",
        "apikey",
        "secretkey",
        "privatekey",
        "accesskey",
        "credential",
        "credentials",
        "secretkeybase",
        "dsn",
        "pat",
        "authkey",
        "psk",
        "salt",
        "creds",
        "mnemonic",
        "privkey",
        "pfx",
        "p12",
        "keystore",
        "puk",
    }
)
_SECRET_SUFFIXES = ("password", "passwd", "passphrase", "pwd", "secret", "token", "apikey", "pass")
# words that end in "pass" and name no password (PGPASS, SSHPASS, storepass, requirepass do)
_NOT_PASS = frozenset({"bypass", "compass", "overpass", "underpass", "trespass", "surpass"})
_SECRET_PAIRS = frozenset(
    {
        ("api", "key"),
        ("access", "key"),
        ("private", "key"),
        ("license", "key"),
        ("app", "key"),
        ("auth", "key"),
        ("signing", "key"),
        ("master", "key"),
        ("account", "key"),
        ("client", "secret"),
        ("encryption", "key"),
        ("server", "key"),
        ("application", "key"),
        ("admin", "password"),
    }
)
_DESCRIPTIVE_LAST = frozenset(
    {
        "algorithm",
        "algo",
        "count",
        "budget",
        "limit",
        "length",
        "len",
        "size",
        "type",
        "kind",
        "url",
        "uri",
        "endpoint",
        "file",
        "path",
        "dir",
        "name",
        "id",
        "arn",
        "ttl",
        "ref",
        "reference",
        "source",
        "from",
        "timeout",
        "expiry",
        "expires",
        "expiration",
        "env",
        "var",
        "header",
        "prefix",
        "policy",
        "format",
        "version",
        "field",
        "param",
        "min",
        "max",
        "regex",
        "pattern",
        "label",
        "hint",
        "placeholder",
        "reset",
        "strength",
        "changed",
        "required",
        "enabled",
        "validation",
        "help",
    }
)
# a name that refers to a secret held elsewhere: existingSecret, LoadCredential
_DESCRIPTIVE_FIRST = frozenset({"max", "min", "num", "is", "existing", "load"})
# every secret name holds one of these (lower-cased): a text without any holds no secret name
_NAME_LITERALS: tuple[str, ...] = (
    *("pass", "pw", "secret", "token", "key", "cred", "dsn", "pat", "psk", "salt", "mnemonic"),
    *("private", "pfx", "p12", "puk"),
)


def _name_parts(name: str) -> list[str]:
    return [part.lower() for part in _NAME_PART.findall(name.rsplit(".", 1)[-1])]


def is_secret_name(name: str) -> bool:
    """The name rules of ``secret_assignment`` (see the module docstring)."""
    if name == "_auth" or name.endswith(":_auth"):  # npm's legacy base64 user:password
        return True
    parts = _name_parts(name)
    if not parts or parts[-1] in _DESCRIPTIVE_LAST or parts[0] in _DESCRIPTIVE_FIRST:
        return False
    if len(parts) > 1 and parts[-1] == "private":  # JWT_PRIVATE, SIGNING_PRIVATE
        return True
    if any(
        part in _SECRET_PARTS or (part.endswith(_SECRET_SUFFIXES) and part not in _NOT_PASS)
        for part in parts
    ):
        return True
    return any(pair in _SECRET_PAIRS for pair in zip(parts, parts[1:], strict=False))


_IDENT = lazyre.compile(r"[A-Za-z_]+")
_WORD = lazyre.compile(r"[A-Za-z]+[.,:;!?]?")


def _names_itself(name: str, value: str) -> bool:
    """``token = newToken``, ``password: userPassword``: a variable, not a value."""
    low = value.lower()
    return any(part.lower() in low for part in _NAME_PART.findall(name) if len(part) > 2)


# NAME = value, NAME: value, "NAME": "value", export NAME='value' (the operator on NAME's line).
_ASSIGN_TAIL = (
    r"[A-Za-z_][\w.-]*+)(?:\*\*)?['\"]?\]?[ \t]*(?P<op>:=|=>|=|:)"
    r"(?:\*\*)?[ \t]*"
    r"(?:(?:[bBrRuU]{1,2}(?=['\"]))?(?P<q>['\"])(?:(?P=q){2})?(?P<qv>[^'\"\n]+)(?P=q)"
    r"|(?P<v><[^<>\n]*>|[^\s'\",;}{)\]]+))"
)
_ASSIGN = lazyre.compile(r"(?P<name>(?<![\w.-])" + _ASSIGN_TAIL)
_TEMPLATE = lazyre.compile(r"[$<{%].*|[*x.\u2026#-]+|your[_-].*", re.IGNORECASE)
_ENV_NAME = lazyre.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")  # an environment variable's


# A name segment this long with a digit in it is a hash or base64 text (an integrity hash
# whose tail ends in ``PW=``), not a variable's name.
_HASH_SEGMENT = lazyre.compile(r"(?:^|[_.-])(?=[A-Za-z]*\d)[A-Za-z0-9]{20,}(?:$|[_.-])")


def _assignment(match: re.Match[str]) -> Span | None:
    name = match["name"]
    group = "qv" if match["qv"] is not None else "v"
    value = match[group]
    if _HASH_SEGMENT.search(name) or _closed_before_value(match):
        return None
    start, end = match.span(group)
    if name.lower() == "key" and _word_before(match.string, match.start("name")) in (
        _NOT_SECRET_KEYS
    ):
        return None  # ``cache key: …``, ``public key: …``: a key that opens nothing
    if group == "v" and _BLOCK_SCALAR.fullmatch(value):
        block = _block_value(match.string, match.start("name"), end)
        if block is None:
            return None
        lines = "".join(match.string[block[0] : block[1]].split())  # (folded: one token)
        if is_secret_name(name):
            return block if looks_like_value(lines, words=True) else None
        return block if _not_named_secret(name, lines, 0) is not None else None
    if group == "v" and value.endswith("(") and _CALLEE_NAME.fullmatch(value[:-1]):
        return _wrapped(match.string, end, value[:-1]) if is_secret_name(name) else None
    if not is_secret_name(name):
        return _not_named_secret(name, value, start)
    if group == "v" and "passphrase" in name.lower() and not _TEMPLATE.fullmatch(value):
        # An unquoted passphrase may run on over spaces (``PASSPHRASE=summer coffee 49 …``):
        # its end is unknowable, so it is redacted to the end of the line (fail closed).
        text = match.string
        line_end = text.find("\n", end)
        rest = text[end:] if line_end == -1 else text[end:line_end]
        if rest.strip():
            return start, end + len(rest.rstrip())
    # NAME=value with nothing between (a shell or .env line: `DB_PASS=qwertyuiop`) sets the
    # secret itself, whatever it looks like; `password: required` may describe it instead.
    glued = match["op"] == "=" and start - (group == "qv") == match.end("op")
    # So does an environment variable's name however it is set (``REDIS_PASSWORD: sunflower``
    # in a compose file's environment): a sentence does not name a variable. (A quoted word
    # after any secret name was measured and not taken: ``"credsStore": "osxkeychain"``.)
    words = glued or _ENV_NAME.fullmatch(name) is not None
    if not looks_like_value(value, words=words) or (
        _IDENT.fullmatch(value) and _names_itself(name, value)
    ):
        return None
    return start, end


# a YAML block scalar's header: ``|``, ``>-``, ``|+2`` (its value is the indented lines below)
_BLOCK_SCALAR = lazyre.compile(r"[|>][+-]?[1-9]?[+-]?")


def _block_value(text: str, name_at: int, header_end: int) -> Span | None:
    """``secret: |`` / ``key: >-`` and the lines indented below it: those lines, whole (a
    folded value may be split over them); None when the header's line goes on or no line
    below is indented further than the name."""
    line_start = text.rfind("\n", 0, name_at) + 1
    indent = len(text[line_start:name_at]) - len(text[line_start:name_at].lstrip(" \t-"))
    line_end = text.find("\n", header_end)
    if line_end == -1 or text[header_end:line_end].strip():
        return None
    start = end = -1
    at = line_end + 1
    while at < len(text):
        nxt = text.find("\n", at)
        nxt = len(text) if nxt == -1 else nxt
        line = text[at:nxt]
        if line.strip():
            if len(line) - len(line.lstrip(" \t")) <= indent:
                break
            if start == -1:
                start = at + len(line) - len(line.lstrip(" \t"))
            end = at + len(line.rstrip())
        at = nxt + 1
    return None if start == -1 else (start, end)


def _word_before(text: str, at: int) -> str:
    """The lower-cased word that ends one space before ``at`` ("" if none)."""
    if at < 2 or text[at - 1] != " ":
        return ""
    start = at - 1
    while start and text[start - 1].isalpha():
        start -= 1
    return text[start : at - 1].lower()


def _closed_before_value(match: re.Match[str]) -> bool:
    """``expect "password:"; send …``: the name sits in a string that the quote after the
    operator closes; what follows is not its value."""
    text, at = match.string, match.start("name")
    quote = text[at - 1] if at else ""
    between = text[match.end("name") : match.start("op")]
    return quote in "'\"" and match["q"] == quote and quote not in between


# ``NEO4J_AUTH=neo4j/secret``, ``BASIC_AUTH: user:secret``: a name for a login pair
_PAIR_LAST = frozenset({"auth", "login", "userpass", "basicauth"})
_PAIR_VALUE = lazyre.compile(r"[^\s:/@]{1,64}[:/](?P<secret>\S{4,})")
# ``routing_key``, ``integrationKey``: a key-named field holding machine-made text is a key
_NOT_SECRET_KEYS = frozenset(
    {
        "public",
        "primary",
        "foreign",
        "sort",
        "partition",
        "cache",
        "hash",
        "idempotency",
        "lookup",
        "dedup",
        "unique",
        "row",
        "object",
        "map",
        "message",
        "translation",
        "i18n",
        "sha",
        "checksum",
        "etag",
        "commit",
        "hot",
        "shortcut",
        "keyboard",
        "ssh",
        "gpg",
        "pgp",
        "fingerprint",
        "group",
        "storage",
    }
)
_TOKEN_CHARS = lazyre.compile(r"[A-Za-z0-9_-]+")


def _keyish(value: str) -> bool:
    """Machine-made text in a key-named field: 20 or more letters and digits (at least four
    of each), high entropy, few word-like runs; never a UUID."""
    if len(value) < 20 or not _TOKEN_CHARS.fullmatch(value) or _UUID_IN.search(value):
        return False
    digits = _digits(value)
    letters = len(value) - digits - value.count("_") - value.count("-")
    wordish = sum(len(m) for m in _WORDISH.findall(value))
    return digits >= 4 and letters >= 4 and wordish <= len(value) * 0.4 and _entropy(value) >= 3.5


def _not_named_secret(name: str, value: str, start: int) -> Span | None:
    """A name that is not a secret name may still hold one: a login pair under an ``auth``
    name (the part after ``user:`` or ``user/``), machine-made text under a ``…key`` name."""
    parts = _name_parts(name)
    if not parts:
        return None
    if parts[-1] in _PAIR_LAST:
        pair = _PAIR_VALUE.fullmatch(value)
        if pair and looks_like_value(pair["secret"], words=True):
            return start + pair.start("secret"), start + len(value)
        return None
    if parts[-1] == "key" and not _NOT_SECRET_KEYS.intersection(parts) and _keyish(value):
        return start, start + len(value)
    return None


_QUERY_NAMES = frozenset(
    {
        "access_token",
        "refresh_token",
        "id_token",
        "token",
        "api_key",
        "apikey",
        "key",
        "client_secret",
        "password",
        "passwd",
        "circle-token",
        "auth",
        "sig",
        "signature",
        "appid",
        "app_key",
        "appkey",
        "code",
    }
)


def _query_value(match: re.Match[str]) -> Span | None:
    """``?token=…``, ``&client_secret=…``, or any secret name (``&db_pass=…``)."""
    name = match["name"]
    if name.lower() not in _QUERY_NAMES and not is_secret_name(name):
        return None
    return match.span("secret") if looks_like_value(match["secret"]) else None


def _secret_flag(match: re.Match[str]) -> Span | None:
    """``--db-password=…``, ``-storepass …``, ``--bindPassword …``: a secret name as a flag. A
    value after ``=`` is the secret whatever it looks like; after a space it must look like one
    (not another flag, not a plain word: ``--password-stdin``, ``--token TOKEN``)."""
    name, value = match["name"], match["secret"]
    if not is_secret_name(name) or _HASH_SEGMENT.search(name):
        return None
    glued = match["op"] == "="
    if not glued and (value.startswith("-") or not match["q"] and _PLAIN_WORD.fullmatch(value)):
        return None
    if "puk" in _name_parts(name) and value.isdigit() and len(value) >= 6:
        return match.span("secret")  # ``--new-puk 56781234``: a PUK is digits
    if (
        not looks_like_value(value, words=glued)
        or _FLAG_PLACEHOLDER.fullmatch(value.strip("'\""))
        or (_IDENT.fullmatch(value) and _names_itself(name, value))
    ):
        return None
    return match.span("secret")


# what a flag's documentation shows in place of a value: ``--private-key=LOCAL_FILE_PATH``,
# ``--private-key=/home/me/key.pfx`` (a path names the secret's file)
_FLAG_PLACEHOLDER = lazyre.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*|~?[\w.-]*/[\w./~-]*")

_HEXISH = lazyre.compile(
    r"[0-9a-f]{32,}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)


def _command_token(match: re.Match[str]) -> Span | None:
    """``wandb login <key>``, ``snyk auth <uuid>``, ``ngrok config add-authtoken <token>``: what
    a login command is given is its credential when it is random, hex or a UUID."""
    value = match["secret"]
    ok = looks_random(value) or _HEXISH.fullmatch(value) or looks_like_value(value, strict=True)
    return match.span("secret") if ok else None


# ----------------------------------------------------------------------------- names elsewhere


def _named_value(match: re.Match[str]) -> Span | None:
    """The name in one field, the value in the next: ``- name: REDIS_PASSWORD`` / ``value: …``
    (a Kubernetes env entry, an Azure Pipelines variable), ``{"name": …, "value": …}``,
    ``<add key="ApiSecret" value="…"/>``. The name makes it a secret whatever it looks like."""
    group = "qv" if match["qv"] is not None else "v"
    value = match[group]
    if not is_secret_name(match["name"]) or _HASH_SEGMENT.search(match["name"]):
        return None
    return match.span(group) if looks_like_value(value, words=True) else None


# a name in an element's attributes: <entry key="smtp.password">, <property name="password">
_NAME_ATTRIBUTE = lazyre.compile(r"""(?i)\b(?:name|key)\s*=\s*['"]([^'"<>\n]{1,80})['"]""")


def _element_value(match: re.Match[str]) -> Span | None:
    """``<password>…</password>``, ``<wsse:Password …>…</wsse:Password>``, ``<entry
    key="smtp.password">…</entry>``, plist ``<key>ApiSecret</key><string>…</string>``, a
    KeePass export's ``<Key>Password</Key><Value …>…</Value>``: an element's text (or its
    ``<![CDATA[…]]>``) whose tag, ``name`` / ``key`` attribute or preceding key is a secret
    name."""
    if match["tag"]:
        group = "secret" if match["cdata"] is None else "cdata"
    else:
        group = "value" if match["vcdata"] is None else "vcdata"
    name = match["tag"].rsplit(":", 1)[-1] if match["tag"] else match["key"]
    if not is_secret_name(name):
        attribute = _NAME_ATTRIBUTE.search(match["attrs"] or "")
        if attribute is None or not is_secret_name(attribute[1]):
            return None
    value = match[group].strip()
    if not looks_like_value(value, words=True):
        return None
    start = match.start(group) + match[group].index(value)
    return start, start + len(value)


_TABLE_CELL = lazyre.compile(r"[^|]+")


def _table_column(match: re.Match[str]) -> list[Span] | None:
    """A Markdown table whose header names a secret column (``| user | password |``): that
    column's cell in every row."""
    heads = match["head"].split("|")[:-1]
    secret = {i for i, cell in enumerate(heads) if is_secret_name(cell.strip(" *`_"))}
    spans: list[Span] = []
    at = match.start("body")
    for line in match["body"].splitlines(keepends=True):
        bar = line.index("|") + 1
        cells = line[bar:].rstrip().split("|")
        offset = at + bar
        # a key / value table: a row whose first cell names a secret holds it in the next
        named = 1 if len(cells) > 1 and is_secret_name(cells[0].strip(" *`_")) else -1
        for index, cell in enumerate(cells):
            value = cell.strip()
            # (a key / value row's value is one token: words there describe it)
            wanted = index in secret or index == named and not any(c.isspace() for c in value)
            if wanted and value and looks_like_value(value.strip("`"), words=True):
                start = offset + cell.index(value)
                spans.append((start, start + len(value)))
            offset += len(cell) + 1
        at += len(line)
    return spans or None


_CSV_HEAD_CELL = lazyre.compile(r"[A-Za-z][\w.-]*(?: [\w.-]+){0,2}")  # a column's name: 1-3 words


def _csv_column(match: re.Match[str]) -> list[Span] | None:
    """A CSV header with a secret-named column (an AWS credentials download: ``User
    name,Password,Access key ID,Secret access key``) and the row under it: that column's cell."""
    heads = match["head"].split(",")
    if not all(_CSV_HEAD_CELL.fullmatch(cell.strip()) for cell in heads):
        return None
    secret = {i for i, cell in enumerate(heads) if is_secret_name(cell.strip())}
    cells = match["row"].split(",")
    if not secret or len(cells) != len(heads):
        return None
    spans: list[Span] = []
    offset = match.start("row")
    for index, cell in enumerate(cells):
        value = cell.strip().strip('"')
        if index in secret and value and looks_like_value(value, words=True):
            start = offset + cell.index(value)
            spans.append((start, start + len(value)))
        offset += len(cell) + 1
    return spans or None


def _directive(match: re.Match[str]) -> Span | None:
    """``requirepass …`` (redis.conf), ``secret_access_key …`` (``rclone config create``),
    ``password …`` (.netrc): a secret name, a space, then a value — not a word, a version, a
    path, a URL, a flag or code."""
    name, value = re.split(r"[/:]", match["name"])[-1], match["secret"]  # app/db/password
    if not is_secret_name(name) or _HASH_SEGMENT.search(name) or value.startswith("-"):
        return None
    if _WORD.fullmatch(value):  # ``password authentication``, ``token concatenation``
        return None
    if _NOT_PROSE_VALUE.fullmatch(value) and not _random_base64(value):
        return None
    if _IDENT.fullmatch(value) and _names_itself(name, value):
        return None
    return match.span("secret") if looks_like_value(value) else None


# ----------------------------------------------------------------------------- said aloud

_VOWEL = lazyre.compile(r"[aeiouyAEIOUY]")


def _spoken(match: re.Match[str]) -> Span | None:
    """A secret as people pass it on: a PIN, door or safe code (four or more digits), recovery
    codes, a secret printed in groups of four (an app password, a TOTP key typed by hand), a
    wallet's seed words. Each group reads as random: a digit, a hyphen between, upper case, or
    a group without a vowel (ordinary words have one)."""
    if match["secret"] is not None:  # a PIN, a door code: four digits or more
        ok = sum(c.isdigit() for c in match["secret"]) >= 4
        return match.span("secret") if ok else None
    if match["list"] is not None:  # recovery codes
        return match.span("list") if _DIGIT.search(match["list"]) else None
    if match["words"] is not None:  # seed words, not a sentence
        words = match["words"].split()
        return None if _STOP_WORDS.intersection(words) else match.span("words")
    value = match["grouped"]
    groups = re.split(r"[ -]", value)
    randomish = (
        _DIGIT.search(value) is not None
        or "-" in value
        or value.isupper()
        or any(_VOWEL.search(group) is None for group in groups)
    )
    return match.span("grouped") if randomish else None


_STOP_WORDS = frozenset(
    {"the", "and", "for", "with", "that", "this", "from", "are", "was", "not", "you", "but"}
    | {"when", "then", "will", "into", "onto", "have", "has", "its", "our", "your"}
)


# ----------------------------------------------------------------------------- URL paths

# a path segment after which a capability URL carries its secret: /hooks/<id>/<token>,
# /inputs/<token>/, /with/key/<key>, /hooks/catch/<account>/<hook>/
_PATH_WORDS = frozenset(
    {"hook", "hooks", "webhook", "webhooks", "inputs", "catch", "key", "keys", "token", "tokens"}
    | {"secret", "secrets", "apikey"}
)
_VERSIONISH = lazyre.compile(r"v?\d+(?:[.-]\d+)*|\d{1,10}")


def _path_secretish(segment: str) -> bool:
    """A path segment that reads as a credential: a UUID, 16 or more hex digits, machine-made
    text, or six or more letters and digits mixed (not a version, not a number)."""
    if _UUID_IN.fullmatch(segment) or _HEXISH_LONG.fullmatch(segment) or looks_random(segment):
        return True
    return (
        len(segment) >= 6
        and _TOKEN_CHARS.fullmatch(segment) is not None
        and _DIGIT.search(segment) is not None
        and _LETTER.search(segment) is not None
        and not _VERSIONISH.fullmatch(segment)
    )


_HEXISH_LONG = lazyre.compile(r"[0-9a-fA-F]{16,}")


def _url_path_token(match: re.Match[str]) -> list[Span] | None:
    """The credential in a capability URL's path: the segments after ``hooks`` / ``webhook`` /
    ``inputs`` / ``key`` … that read as one, or a UUID or 32 or more hex digits that is the
    URL's whole path (``https://node.example/<hex>/``, a ping URL)."""
    path, offset = match["path"], match.start("path")
    segments = path.split("/")
    spans: list[Span] = []
    at = offset
    follows = 0
    for index, segment in enumerate(segments):
        if follows and segment and _path_secretish(segment):
            spans.append((at, at + len(segment)))
        follows = 3 if segment.lower() in _PATH_WORDS else max(0, follows - 1)
        if index == 1 and not any(segments[2:]):
            whole = _UUID_IN.fullmatch(segment) or re.fullmatch(r"[0-9a-fA-F]{32,}", segment)
            if whole and _DIGIT.search(segment) and _LETTER.search(segment):
                spans.append((at, at + len(segment)))
        at += len(segment) + 1
    return spans or None


# ----------------------------------------------------------------------------- command lines

# A command's documented password argument: (commands, flag, form). Form " ": the value after a
# space; "": glued to the flag (7z -pSECRET); "pass:": OpenSSL's pass-phrase argument; "%" and
# ",": the part after ``user%`` / ``user,`` (smbclient -U user%secret, lftp -u user,secret).
_COMMAND_PASSWORDS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("zip", "unzip", "zipcloak"), "-P", " "),
    (("7z", "7za", "7zr", "rar", "unrar"), "-p", ""),
    (("rar",), "-hp", ""),
    (("sqlcmd", "bcp", "osql"), "-P", " "),
    (("mosquitto_pub", "mosquitto_sub", "mosquitto_rr"), "-P", " "),
    (
        ("ldapsearch", "ldapmodify", "ldapadd", "ldapdelete", "ldapwhoami", "ldappasswd"),
        "-w",
        " ",
    ),
    (("mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport"), "-p", " "),
    (("openssl",), "-k", " "),
    (("openssl",), "-pass", "pass:"),
    (("openssl",), "-passin", "pass:"),
    (("openssl",), "-passout", "pass:"),
    (("cloudsmith",), "-k", " "),
    (("influx",), "-t", " "),
    (("smbclient", "rpcclient", "smbcacls", "smbget"), "-U", "%"),
    (("lftp",), "-u", ","),
)
_COMMAND_FLAGS = {
    (command, flag): form for commands, flag, form in _COMMAND_PASSWORDS for command in commands
}
_COMMAND_NAMES = tuple(sorted({command for command, _ in _COMMAND_FLAGS}))
_COMMAND_NAME_SET = frozenset(_COMMAND_NAMES)


def _command_of(text: str, at: int) -> str:
    """The command whose arguments include position ``at``: the nearest word before it in its
    line's pipeline segment that names one of ``_COMMAND_PASSWORDS``' commands (without its
    directory: ``/usr/bin/zip``), also after prose (``… the backup: zip -P …``)."""
    start = max(text.rfind(sep, 0, at) for sep in ("\n", "|", ";", "&", "$(", "`")) + 1
    for word in reversed(text[start:at].split()):
        name = word.rsplit("/", 1)[-1].strip("'\"`")
        if name in _COMMAND_NAME_SET:
            return name
    return ""


def _command_password(match: re.Match[str]) -> Span | None:
    """The value of a command's documented password flag (``zip -P``, ``7z -p…``, ``ldapsearch
    -w``, ``openssl … -passout pass:…``, ``smbclient -U user%…``); see ``_COMMAND_PASSWORDS``."""
    form = _COMMAND_FLAGS.get((_command_of(match.string, match.start()), match["flag"]))
    if form is None or (form == "") != (match["sep"] == ""):
        return None
    value, start = match["secret"], match.start("secret")
    if form in ("pass:", "%", ","):
        cut = value.find(form[-1] if form != "pass:" else "pass:")
        if cut < 0 or (form == "pass:" and cut):
            return None
        skip = cut + (5 if form == "pass:" else 1)
        value, start = value[skip:], start + skip
    ok = looks_like_value(value.strip("'\""), words=True)
    return (start, start + len(value)) if ok else None


# a command that reads a password from its standard input
_READS_PASSWORD = lazyre.compile(
    r"--pass(?:word|phrase)-(?:stdin|fd)\b|--with-token\b|\bsudo\b[^|\n]*?[ \t]-\w*S\b"
    r"|\b(?:ch|smb)?passwd\b|\bkinit\b|\bcryptsetup\b|-pass(?:in)?[ \t]+stdin\b"
    r"|\bsecret[ \t]+(?:create|set)\b"
)
# a file named for a secret (~/.vault_pass, /etc/openvpn/auth.txt, token.txt), not a list of
# public keys or hosts
_SECRET_FILE = lazyre.compile(
    r"(?i)(?:pass|secret|token|cred|pwd|auth|apikey|api_key|keyfile|key-?file)[\w.-]*$"
    r"|\.(?:psk|key)$"
)
_TEE = lazyre.compile(r"(?:sudo[ \t]+)?tee[ \t]+(?:-a[ \t]+)?(?P<file>\S+)")
_PUBLIC_FILE = lazyre.compile(r"(?i)authorized_keys|known_hosts|\.pub$|\.crt$|\.cer$")
_INI_SECTION = lazyre.compile(r"\[[^\]]*\]")
# a command that stores what it reads under a secret's name (``vercel env add DB_PASSWORD``,
# ``wrangler secret put API_TOKEN``): an upper-case name with an underscore
_ENV_NAME = lazyre.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")


def _piped_password(match: re.Match[str]) -> Span | None:
    """What ``echo`` / ``printf`` pipes into a command that reads a password (``docker login
    --password-stdin``, ``sudo -S``, ``chpasswd``) or writes into a secret-named file, and a
    here-string given to such a command (``gpg --passphrase-fd 0 <<< "…"``). ``user:secret``
    (chpasswd) and ``user\nsecret`` (an OpenVPN auth file): the part after the user."""
    text = match.string
    if match["op"] is not None:
        group = "qv" if match["qv"] is not None else "v"
        rest = match["rest"]
        tee = _TEE.match(rest) if match["op"] == "|" else None
        if tee is not None:  # ``| sudo tee /etc/zabbix/agent.psk``: a write into that file
            target = tee["file"].strip("'\"")
            ok = bool(_SECRET_FILE.search(target)) and not _PUBLIC_FILE.search(target)
        elif match["op"] in ("|", ";"):  # (``;``: the next echo of a subshell piped on)
            ok = _READS_PASSWORD.search(rest) is not None or any(
                _ENV_NAME.fullmatch(word) and is_secret_name(word) for word in rest.split()
            )
        else:
            target = rest.split()[0].strip("'\"") if rest.split() else ""
            ok = bool(_SECRET_FILE.search(target)) and not _PUBLIC_FILE.search(target)
            ok = ok and group == "v" or ok and " " not in match["qv"]
    else:
        group = "hqv" if match["hqv"] is not None else "hv"
        line_start = text.rfind("\n", 0, match.start()) + 1
        ok = _READS_PASSWORD.search(text, line_start, match.start()) is not None
    if not ok:
        return None
    value, start = match[group], match.start(group)
    pieces = [piece for piece in value.split("\\n")]
    if len([p for p in pieces if p]) > 1:  # user\nsecret\n: the lines after the first
        first = value.index("\\n") + 2
        value, start = value[first:].removesuffix("\\n"), start + first
    elif ":" in value and "chpasswd" in text[max(0, match.start() - 80) : match.end() + 80]:
        cut = value.index(":") + 1
        value, start = value[cut:], start + cut
    if _INI_SECTION.fullmatch(value) or not looks_like_value(value, words=True):
        return None
    return start, start + len(value)


def _expect_send(match: re.Match[str]) -> Span | None:
    value = match["secret"]
    return match.span("secret") if looks_like_value(value, words=True) else None


# ----------------------------------------------------------------------------- code

_LITERAL_ARG = lazyre.compile(r"""[bBrRuU]?(['"])([^'"\n]*)\1""")
_KEYWORD_ARG = lazyre.compile(r"\w+\s*[=:]")
# where a call connects rather than who: a host, a URL, a port, a DSN or driver string
# (``dbi:Pg:dbname=app``, ``mysql:host=db;dbname=shop``, ``jdbc:…``)
_HOST = lazyre.compile(
    r"localhost|[\w-]+(?:\.[\w-]+)+|\S*://\S*|jdbc:\S*|[A-Za-z][\w+.-]*:\S*[:=]\S*|\d+"
)


# a cookie named for a session or a login: PHPSESSID, connect.sid, _app_session, JSESSIONID,
# .AspNetCore.Cookies (ASP.NET's), remember_user_token, __Host-next-auth.session-token
_SESSION_COOKIE = lazyre.compile(
    r"(?i)sess|(?<![a-z])sid(?![a-z])|auth|identity|token|remember|jwt|[cx]srf|login"
    r"|aspnetcore|aspxauth"
)
_COOKIE_PAIR = lazyre.compile(r"(?:^|;)[ \t]*(?P<name>[^=;\s]{1,80})=(?P<value>[^;\s]*)")


def _session_cookie(match: re.Match[str]) -> list[Span] | None:
    """The values of the session- and login-named cookies in a cookie header or option."""
    offset = match.start("pairs")
    spans = [
        (offset + pair.start("value"), offset + pair.end("value"))
        for pair in _COOKIE_PAIR.finditer(match["pairs"])
        if _SESSION_COOKIE.search(pair["name"])
        and len(pair["value"]) >= 8
        and looks_like_value(pair["value"], words=True)
    ]
    return spans or None


# after the user, a dotted value whose last part is no host's (``ALID.kueph525-lix``)
_DOTTED_PASSWORD = lazyre.compile(r"[^\s:/]+\.[^.\s:/]*(?:\d|[A-Z-])[^.\s:/]*")
_CALLEE = lazyre.compile(r"(?<![\w$])[A-Za-z_][\w.$:]*[ \t]*$")


def _protocol_login(match: re.Match[str]) -> Span | None:
    """IMAP ``a1 LOGIN user password``, Redis ``AUTH [user] password``: the last argument."""
    value = match["secret"]
    if value.startswith("-") or _FLAG_PLACEHOLDER.fullmatch(value):
        return None  # AUTH PASSWORD in a manual, a flag
    if not looks_like_value(value, words=True):
        return None
    return match.span("secret")


def _named_argument(match: re.Match[str]) -> Span | None:
    """``define('DB_PASSWORD', '…')``, ``ENV.fetch('DB_PW', '…')``: a literal value passed
    with a literal secret name (a constant defined, a setting set, a default given)."""
    name, value = match["name"], match["secret"]
    if not _CALLEE.search(match.string, max(0, match.start() - 80), match.start()):
        return None  # a parenthesis, not a call: ``("DB_PASSWORD", "…")`` in a tuple
    if not is_secret_name(name) or (_IDENT.fullmatch(value) and _names_itself(name, value)):
        return None
    if _NOT_PROSE_VALUE.fullmatch(value):  # as in credential_call: a version, a SHA, a path
        return None
    if _A_PASSWORD_WORD.fullmatch(value):
        return None  # a label, a translation: ``('password', 'Passwort')``
    return match.span("secret") if looks_like_value(value, words=True) else None


def _arguments(args: str) -> Iterator[tuple[int, str]]:
    """The comma-separated pieces of a call's arguments and where each starts; a comma inside
    a quoted string does not separate (``'cn=admin,dc=corp'``)."""
    start = 0
    quote = ""
    for at, char in enumerate(args):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == ",":
            yield start, args[start:at]
            start = at + 1
    yield start, args[start:]


def _credential_call(match: re.Match[str]) -> Span | None:
    """``NetworkCredential("user", "…")``, ``getConnection(url, "user", "…")``,
    ``smtp.PlainAuth("", "me@x", "…", host)``, ``auth=("user", "…")``: in a call that logs in,
    the string after the first one naming a user (hosts, URLs and empty strings skipped)."""
    group = "args" if match["args"] is not None else "bare"
    args, offset = match[group], match.start(group)
    user = False
    for at, piece in _arguments(args):
        stripped = piece.strip()
        literal = _LITERAL_ARG.fullmatch(stripped)
        position = offset + at + piece.find(stripped)
        if literal is None or _KEYWORD_ARG.match(stripped):
            user = False
            continue
        value = literal[2]
        if not value or _HOST.fullmatch(value) and not (user and _DOTTED_PASSWORD.fullmatch(value)):
            continue
        if not user:
            user = True
            continue
        if looks_like_value(value, words=True) and not _NOT_PROSE_VALUE.fullmatch(value):
            start = position + stripped.index(value, 1)
            return start, start + len(value)
        return None
    return None


# a method that takes the secret rather than sets or checks it: setPassword("…"),
# .password("…"), withApiKey("…"); not getPassword("prompt"), hashPassword("…")
_VERBS = frozenset(
    {
        "get",
        "read",
        "ask",
        "prompt",
        "check",
        "verify",
        "validate",
        "hash",
        "encrypt",
        "decrypt",
        "reset",
        "change",
        "update",
        "generate",
        "create",
        "new",
        "store",
        "save",
        "load",
        "fetch",
        "find",
        "has",
        "is",
        "mask",
        "redact",
        "show",
        "print",
        "log",
        "send",
        "request",
        "rotate",
        "refresh",
        "revoke",
        "parse",
        "to",
        "from",
        "random",
        "compare",
        "match",
        "test",
        "use",
        "forgot",
        "lost",
        "require",
        "enter",
    }
)


def _setter(match: re.Match[str]) -> Span | None:
    """``setPassword("…")``, ``.apiKey("…")``, ``ConvertTo-SecureString "…"``."""
    if match["name"] is not None:
        parts = _name_parts(match["name"])
        if parts == ["auth"]:  # ``red:auth("…")``, ``redis.auth("…")``: a password, if one
            value = match["secret"]
            ok = looks_random(value) or looks_like_value(value, strict=True)
            return match.span("secret") if ok else None
        if parts and parts[0] in ("set", "with"):
            parts = parts[1:]
        if not parts or parts[0] in _VERBS or not is_secret_name("_".join(parts)):
            return None
    group = "secret" if match["name"] is not None else "svalue"
    return match.span(group) if looks_like_value(match[group], words=True) else None


FINDERS: list[Callable[[str], list[tuple[int, int, str]]]] = []
"""Set by the engine: the secrets in a text (what ``base64_secret`` and ``urlencoded_secret``
ask of the text they decode)."""

_PRINTABLE = lazyre.compile(r"[\x20-\x7e\t\n\r]*")


def _base64_secret(match: re.Match[str]) -> Span | None:
    """Standard or URL-safe base64 whose decoded text holds a secret (a Kubernetes Secret's
    data, ``GOOGLE_CREDENTIALS_B64=…``, a wrapped key): the whole base64 is redacted."""
    value = match.group()
    if not FINDERS or _HEX_RUN.fullmatch(value):
        return None
    decoded = _decoded_text(value)
    return match.span() if decoded is not None and FINDERS[0](decoded) else None


_HEX_DIGITS = lazyre.compile(r"[0-9a-fA-F]+")


def _hex_text(value: str) -> str | None:
    """What an even run of hex digits decodes to, when that is printable ASCII text of 8 or
    more characters (random bytes, a hash, almost never are)."""
    if len(value) % 2 or len(value) < 16 or not _HEX_DIGITS.fullmatch(value):
        return None
    decoded = bytes.fromhex(value)
    if not decoded.isascii():
        return None
    text = decoded.decode("ascii")
    return text if _PRINTABLE.fullmatch(text) and _LETTER.search(text) else None


# an escape in JSON, a C-like string or HTML: \" \\ \/ \uXXXX, &quot; &amp; &#39; &#x27;
_ESCAPE = lazyre.compile(
    r"\\(?:u(?P<u>[0-9A-Fa-f]{4})|(?P<c>[\"'\\/]))"
    r"|&(?:(?P<named>quot|amp|apos|lt|gt)|#(?P<dec>\d{1,7})|#[xX](?P<hex>[0-9A-Fa-f]{1,6}));"
)
_NAMED = {"quot": '"', "amp": "&", "apos": "'", "lt": "<", "gt": ">"}


def _unescaped(text: str, start: int, end: int) -> tuple[str, list[int], list[int]]:
    """``text[start:end]`` with its escapes decoded, and where each character starts and ends
    in ``text`` (as ``_percent_decoded``)."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    at = start
    for escape in _ESCAPE.finditer(text, start, end):
        out.append(text[at : escape.start()])
        starts.extend(range(at, escape.start()))
        ends.extend(range(at + 1, escape.start() + 1))
        if escape["u"] or escape["dec"] or escape["hex"]:
            number = (
                int(escape["u"] or escape["hex"], 16) if not escape["dec"] else int(escape["dec"])
            )
            char = chr(number) if 0 < number < 0x110000 else "?"
        else:
            char = escape["c"] or _NAMED[escape["named"]]
        out.append(char)
        starts.append(escape.start())
        ends.append(escape.end())
        at = escape.end()
    out.append(text[at:end])
    starts.extend(range(at, end))
    ends.extend(range(at + 1, end + 1))
    return "".join(out), starts, ends


def _escaped_secret(match: re.Match[str]) -> list[Span] | None:
    """A secret in escaped text (a JSON string holding JSON, ``&quot;``-escaped HTML,
    ``&#77;&#97;…``): the line is unescaped and searched like any text; what holds each
    secret there is redacted here."""
    decoded, starts, ends = _unescaped(match.string, match.start(), match.end())
    if not FINDERS or decoded == match.group():
        return None
    spans = [(starts[start], ends[end - 1]) for start, end, _kind in FINDERS[0](decoded)]
    return spans or None


_PERCENT = lazyre.compile(r"%([0-9A-Fa-f]{2})|\+")


def _percent_decoded(text: str, start: int, end: int) -> tuple[str, list[int], list[int]]:
    """``text[start:end]`` with %XX escapes and ``+`` decoded, and where each decoded
    character starts and ends in ``text``."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    at = start
    for escape in _PERCENT.finditer(text, start, end):
        out.append(text[at : escape.start()])
        starts.extend(range(at, escape.start()))
        ends.extend(range(at + 1, escape.start() + 1))
        out.append(chr(int(escape[1], 16)) if escape[1] else " ")
        starts.append(escape.start())
        ends.append(escape.end())
        at = escape.end()
    out.append(text[at:end])
    starts.extend(range(at, end))
    ends.extend(range(at + 1, end + 1))
    return "".join(out), starts, ends


def _urlencoded_secret(match: re.Match[str]) -> list[Span] | None:
    """A secret inside URL-encoded text (``next=https%3A%2F%2F…%3Faccess_token%3Dghp_…``, a
    password with ``%40`` in it, twice-encoded ``%253D``): a line holding an escape is decoded
    and searched like any text (once per line: twice-encoded text is decoded again by the
    search), and what holds each secret there is redacted here."""
    decoded, starts, ends = _percent_decoded(match.string, match.start(), match.end())
    if not FINDERS or decoded == match.group():
        return None
    spans = [(starts[start], ends[end - 1]) for start, end, _kind in FINDERS[0](decoded)]
    return spans or None


def _decoded_text(value: str) -> str | None:
    """What standard or URL-safe base64 decodes to, when that is printable text."""
    padded = value + "=" * (-len(value) % 4)
    try:
        raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
        decoded = raw.decode("ascii")
    except (binascii.Error, ValueError):
        return None
    return decoded if len(decoded) >= 8 and _PRINTABLE.fullmatch(decoded) else None


# ----------------------------------------------------------------------------- the rules

_E = r"(?![\w-])"  # a token's end
_PW = r"[^\s'\"`]"  # a password character on a command line


def _rx(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """A rule's regex, compiled the first time a text holds one of the rule's literals:
    compiling all of them costs every process that scrubs one short text (a hook showing a
    block) more than the rest of its work, and such a text needs a few."""
    return lazyre.compile(pattern, flags)


# a token glued to the word before it is not a token (``disk-…``, ``my_ghp_…``); after ``-`` or
# ``.`` it may be (a file name: ``token-ghs_….json``), when the piece before it is short
_GLUED = lazyre.compile(r"\w|(?<=[A-Za-z0-9]{9})-")


def _mixed_token(match: re.Match[str]) -> Span | None:
    """A vendor's token whose prefix is also a word of code (``re_``): upper, lower and digit."""
    value = match["secret"]
    return match.span("secret") if all(c.search(value) for c in _CLASSES[:3]) else None


def _bip39_words() -> frozenset[str]:
    from mnemonic import Mnemonic  # the reference implementation's word list (trezor)

    return frozenset(Mnemonic("english").wordlist)


_BIP39: list[frozenset[str]] = []


def _seed_phrase(match: re.Match[str]) -> list[Span]:
    """A wallet's recovery phrase: 12 or more words in a row, each from BIP-39's list of 2,048
    (prose never holds twelve of them in a row: "the", "of", "is" are not in it). The match is
    a whole run of short words; every such phrase in it is returned, and none ([]) moves the
    search past the run (one pass over a long run, never one per word of it)."""
    if not _BIP39:
        _BIP39.append(_bip39_words())
    words = _BIP39[0]
    found: list[Span] = []
    count = run_start = run_end = 0
    for word in _SEED_WORD.finditer(match.group()):
        if word.group() in words:
            if count == 0:
                run_start = word.start()
            count += 1
            run_end = word.end()
            continue
        if count >= 12:
            found.append((match.start() + run_start, match.start() + run_end))
        count = 0
    if count >= 12:
        found.append((match.start() + run_start, match.start() + run_end))
    return found


_SEED_WORD = lazyre.compile(r"[a-z]+")
_TOTP_GROUP = lazyre.compile(r"[A-Za-z2-7]{4}")


def _grouped_base32(match: re.Match[str]) -> Span | None:
    """A TOTP seed typed by hand (``imx3 sffb 7dhi …``): base32 in groups of four, several of
    them holding one of base32's digits (words of four letters hold none)."""
    groups = _TOTP_GROUP.findall(match.group())
    with_digit = sum(1 for g in groups if _DIGIT.search(g))
    return match.span() if len(groups) >= 4 and with_digit >= max(2, len(groups) // 3) else None


def _code_line(match: re.Match[str]) -> Span | None:
    """One of a list of recovery codes (``4f8e7-5a8c8``, ``1234 5678``, a line of its own):
    a digit in it."""
    if match["run"] is not None:  # one code of many hex groups (``8668 0265 fd2f …``)
        return match.span("run") if len(_DIGITS_IN.findall(match["run"])) >= 3 else None
    group = "secret" if match["secret"] is not None else "line"
    if len(_DIGITS_IN.findall(match[group])) < 2 or len(_CODES_IN.findall(match.string)) < 3:
        return None  # a list: three codes or more, each with digits (not ``2019-2024`` alone)
    return match.span(group)


_DIGITS_IN = lazyre.compile(r"\d")
_CODES_IN = lazyre.compile(
    r"(?<![\w-])(?:[0-9a-f]{4,6}-[0-9a-f]{4,6}|[0-9a-z]{4}-[0-9a-z]{4}|\d{4} \d{4})(?![\w-])"
    r"|(?m:^)[ \t]*(?:[-*\u2022]|\d{1,2}[.)])?[ \t]*(?=[a-z]*\d[a-z]*\d)[0-9a-z]{8,12}[ \t]*$"
)


def _provider(
    kind: str,
    pattern: str,
    *literals: str,
    folded: bool = False,
    after: str | None = r"[\w-]",
    span_of: SpanOf | None = None,
) -> Rule:
    glued = None if after is None else _GLUED if after == r"[\w-]" else _rx(after)
    return Rule(kind, _rx(pattern), literals, folded=folded, after=glued, span_of=span_of)


def _back(prefix: str, width: int) -> SpanOf:
    """The secret starts ``width`` characters before a match that starts with ``prefix``
    (the regex found the token by its literal tail); other matches: the group ``secret``."""

    def span_of(match: re.Match[str]) -> Span | None:
        start, end = match.span()
        if not match.group().startswith(prefix):
            return match.span("secret")
        return start - width, end

    return span_of


def _mailgun(match: re.Match[str]) -> Span | None:
    start, end = match.span()
    return (start - 3 if end - start == 33 else start - 32), end


_DISCORD_HEAD = lazyre.compile(r"(?<![\w.-])[MNO][\w-]{23,25}")


def _discord(match: re.Match[str]) -> Span | None:
    """The regex found ``.<6>.<27-38>``; the token is that plus a head of 24-26 before it."""
    dot, end = match.span()
    for width in (24, 25, 26):
        if dot >= width and _DISCORD_HEAD.fullmatch(match.string, dot - width, dot):
            return dot - width, end
    return None


_AWS_PREFIXES = ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA")
_GITLAB = ("pat", "ptt", "rt", "dt", "cbt", "oas", "soat", "ft", "imt", "agent", "ffct", "rtr")

RULES: tuple[Rule, ...] = (
    Rule(
        "pem_private_key",
        _rx(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:.*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|(?:(?!\n[ \t]*\r?\n).)*)",
            re.DOTALL,
        ),
        ("PRIVATE KEY",),
        span_of=lambda match: match.span(),
    ),
    Rule(
        "putty_private_key",
        _rx(
            r"(?m)^[ \t]*Private-Lines:[ \t]*\d+[ \t]*\r?\n"
            r"[ \t]*(?P<secret>[A-Za-z0-9+/=]+(?:[ \t]*\r?\n[ \t]*[A-Za-z0-9+/=]+)*)"
            r"(?=[ \t]*(?:\r?\n|$))"
        ),
        ("Private-Lines:",),
        reach=TEXT,
    ),
    _provider(
        "aws_access_key_id",
        r"(?P<secret>(?:" + "|".join(_AWS_PREFIXES) + r"|APKA)[A-Z0-9]{16})"
        r"(?![A-Z0-9])",
        "A",  # every prefix starts with it: one search, then the regex finds the prefixes
        after=r"[A-Z0-9]",
    ),
    _provider(
        "aws_session_token",
        r"(?P<secret>(?:FwoGZXIvYXdzE|IQoJb3JpZ2luX2Vj)[\w+/=]{40,})",
        "FwoGZXIvYXdzE",
        "IQoJb3JpZ2luX2Vj",
        after=r"[\w+/]",
    ),
    _provider(
        "github_token",
        r"(?P<secret>gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{30,})",
        "gh",
        "github_pat_",
    ),
    _provider(
        "gitlab_token",
        r"(?P<secret>gl(?:" + "|".join(_GITLAB) + r")-[\w-]{20,}"
        r"(?:\.[0-9a-z]{2}\.[0-9a-z]{7,})?|GR1348941[\w-]{20,})",
        "gl",
        "GR1348941",
    ),
    _provider("anthropic_api_key", r"(?P<secret>sk-ant-[\w-]{20,})", "sk-ant-"),
    _provider(
        "openai_api_key",
        r"(?P<secret>sk-(?:proj-|svcacct-|admin-|or-v1-)?(?=[\w-]*\d)[\w-]{20,})",
        "sk-",
    ),
    _provider(
        "huggingface_token",
        r"(?P<secret>hf_[A-Za-z]{30,}|api_org_[A-Za-z]{30,})" + _E,
        "hf_",
        "api_org_",
    ),
    _provider("groq_api_key", r"(?P<secret>gsk_[A-Za-z0-9]{48,})", "gsk_"),
    _provider("replicate_api_token", r"(?P<secret>r8_[A-Za-z0-9]{37})" + _E, "r8_"),
    _provider("npm_token", r"(?P<secret>npm_[A-Za-z0-9]{36})" + _E, "npm_"),
    _provider("pypi_token", r"(?P<secret>pypi-AgE[\w-]{50,})", "pypi-AgE"),
    _provider("rubygems_api_key", r"(?P<secret>rubygems_[a-f0-9]{48})", "rubygems_"),
    _provider("docker_pat", r"(?P<secret>dckr_(?:pat|oat)_[\w-]{20,})", "dckr_"),
    _provider(
        "slack_token",
        r"(?P<secret>xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]{32,})",
        "xox",
        "xapp-",
    ),
    _provider(
        "slack_webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[\w/-]{20,})",
        "hooks.slack.com/",
        after=None,
    ),
    _provider(
        "discord_webhook",
        r"discord(?:app)?\.com/api/webhooks/(?P<secret>\d+/[\w-]{40,})",
        "/api/webhooks/",
        after=None,
    ),
    _provider(
        "teams_webhook",
        r"\.webhook\.office\.com/webhookb2/(?P<secret>[\w@/-]{40,})",
        ".webhook.office.com/",
        after=None,
    ),
    _provider(
        "discord_bot_token",
        r"\.[\w-]{6}\.[\w-]{27,38}(?![\w-])",
        ".",
        after=None,
        span_of=_discord,
    ),
    _provider(
        "telegram_bot_token",
        r"(?<![\d:])(?P<secret>\d{8,10}:AA[\w-]{33})(?![\w-])",
        ":AA",
        after=None,
    ),
    _provider("sendgrid_api_key", r"(?P<secret>SG\.[\w-]{22}\.[\w-]{43})", "SG."),
    _provider(
        "mailgun_api_key",
        # found by its "-" (a literal first lets the regex engine skip ahead): key-<32 hex>,
        # or <32 hex>-<8 hex>-<8 hex>
        r"-(?:(?<=(?<![\w-])key-)[a-f0-9]{32}|(?<=(?<![\w-])[a-f0-9]{32}-)[a-f0-9]{8}-[a-f0-9]{8})"
        + _E,
        "-",
        after=None,
        span_of=_mailgun,
    ),
    _provider(
        "mailchimp_api_key",
        r"-us(?<=(?<![\w-])[a-f0-9]{32}-us)\d{1,2}" + _E,
        "-us",
        after=None,
        span_of=_back("-us", 32),
    ),
    _provider("brevo_api_key", r"(?P<secret>xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16})", "xkeysib-"),
    _provider("twilio_api_key", r"(?P<secret>SK[a-f0-9]{32})(?!\w)", "SK", after=r"\w"),
    _provider(
        "stripe_key",
        r"(?P<secret>(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}|whsec_[A-Za-z0-9+/=]{24,})",
        "k_live_",
        "k_test_",
        "whsec_",
    ),
    _provider(
        "square_token", r"(?P<secret>sq0(?:atp|csp)-[\w-]{22,43}|EAAA[\w-]{60})", "sq0", "EAAA"
    ),
    _provider("shopify_token", r"(?P<secret>shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32})", "shp"),
    _provider("digitalocean_token", r"(?P<secret>do[opr]_v1_[a-f0-9]{64})", "_v1_"),
    _provider("google_api_key", r"(?P<secret>AIza[\w-]{35})" + _E, "AIza"),
    _provider("google_oauth_client_secret", r"(?P<secret>GOCSPX-[\w-]{28})", "GOCSPX-"),
    _provider(
        "google_oauth_token",
        r"(?P<secret>ya29\.[\w-]{20,}|1//0[\w-]{40,})",
        "ya29.",
        "1//0",
        after=r"[\w./-]",
    ),
    _provider("firebase_fcm_key", r"(?P<secret>AAAA[\w-]{7}:APA91b[\w-]{100,})", ":APA91b"),
    _provider(
        "azure_ad_client_secret",
        r"(?<![\w~.-])(?P<secret>[\w~.-]{3}\dQ~[\w~.-]{31,34})(?![\w~.-])",
        "Q~",
        after=None,
    ),
    _provider("heroku_api_key", r"(?P<secret>HRKU-[\w-]{20,})", "HRKU-"),
    _provider("atlassian_api_token", r"(?P<secret>ATATT3[\w=-]{50,})", "ATATT3"),
    _provider("bitbucket_app_password", r"(?P<secret>ATBB[A-Za-z0-9]{32,})", "ATBB"),
    _provider("linear_api_key", r"(?P<secret>lin_(?:api|oauth)_[A-Za-z0-9]{40})", "lin_"),
    _provider(
        "notion_token",
        r"(?P<secret>secret_[A-Za-z0-9]{43}|ntn_\d{11}[A-Za-z0-9]{35})" + _E,
        "secret_",
        "ntn_",
    ),
    _provider(
        "doppler_token",
        r"(?P<secret>dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{2,35}\.)?"
        r"[A-Za-z0-9]{40,44})",
        "dp.",
    ),
    _provider(
        "vault_token", r"(?P<secret>hv[sbr]\.[\w-]{24,})", "hvs.", "hvb.", "hvr.", after=r"[\w.]"
    ),
    _provider(
        "terraform_cloud_token",
        r"(?P<secret>[A-Za-z0-9]{14}\.atlasv1\.[\w-]{60,})",
        ".atlasv1.",
    ),
    _provider("pulumi_token", r"(?P<secret>pul-[a-f0-9]{40})", "pul-"),
    _provider("postman_api_key", r"(?P<secret>PMAK-[a-f0-9]{24}-[a-f0-9]{34})", "PMAK-"),
    _provider("airtable_token", r"(?P<secret>pat[A-Za-z0-9]{14}\.[0-9a-f]{64})(?![\w.])", "pat"),
    _provider(
        "braintree_access_token",
        r"(?P<secret>access_token\$(?:production|sandbox|development)\$[0-9a-z]{16}\$[0-9a-f]{32})",
        "access_token$",
    ),
    _provider(
        "age_secret_key",
        r"(?P<secret>AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})",
        "AGE-SECRET-KEY-1",
        after=None,
    ),
    _provider(
        "flutterwave_secret_key",
        r"(?P<secret>FLWSECK(?:_TEST)?-[0-9a-f]{32}-X)" + _E,
        "FLWSECK",
    ),
    _provider(
        "resend_api_key",
        r"(?P<secret>re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24})" + _E,
        "re_",
        span_of=_mixed_token,
    ),
    Rule(
        "bitlocker_recovery_key",
        _rx(r"(?<![\d-])(?P<secret>\d{6}(?:[- ]\d{6}){7})(?![\d-])"),
        ("-", " "),
        context=("recovery", "bitlocker"),
    ),
    Rule(
        "solana_keypair",
        _rx(r"\[(?P<secret>(?:[ \t\r\n]*\d{1,3}[ \t\r\n]*,){63}[ \t\r\n]*\d{1,3})[ \t\r\n]*\]"),
        (",",),
        reach=TEXT,
        context=("solana", "keypair", "wallet"),
    ),
    Rule(
        "seed_phrase",
        _rx(r"(?<![a-z])(?:[a-z]{3,8}[ \t,]+(?:\d{1,2}[.)][ \t]*)?){11,}[a-z]{3,8}"),
        (" ",),
        context=(
            *("seed", "mnemonic", "wallet", "recovery phrase", "secret phrase", "backup phrase"),
            *("bip39", "bip-39", "metamask", "ledger", "trezor", "phantom", "keystore"),
            *("paper key", "key phrase", "recovery words", "seed words"),
        ),
        span_of=_seed_phrase,
    ),
    Rule(
        "totp_seed",
        _rx(r"(?<![\w-])[A-Za-z2-7]{4}(?:[ \t][A-Za-z2-7]{4}){3,15}(?![\w-])"),
        (" ",),
        context=(
            *("2fa", "totp", "authenticator", "mfa", "two-factor", "setup key", "manual entry"),
            *("one-time", "otpauth"),
        ),
        span_of=_grouped_base32,
    ),
    Rule(
        "recovery_code",
        _rx(
            r"(?<![\w-])(?P<run>[0-9a-fA-F]{4}(?:[ -][0-9a-fA-F]{4}){7,31}"
            r"|[0-9A-Z]{5}(?:-[0-9A-Z]{5}){4,7})(?![\w-])"
            r"|(?<![\w-])(?P<secret>[0-9a-f]{4,6}-[0-9a-f]{4,6}|[0-9a-z]{4}-[0-9a-z]{4}"
            r"|\d{4} \d{4})(?![\w-])"
            r"|\n[ \t]*(?:[-*\u2022]|\d{1,2}[.)])?[ \t]*(?P<line>[0-9a-z]{8,12})[ \t]*(?=\r?\n|$)"
        ),
        ("-", " ", "\n"),
        context=(
            *("recovery code", "backup code", "recovery-code", "backup-code", "scratch code"),
            *("backup_code", "recovery_code"),
            "backup verification",
        ),
        span_of=_code_line,
    ),
    Rule(
        "numeric_code",
        _rx(
            r"(?i)(?:\b(?:(?-i:PUK2?|PIN)|pin[ \t-]?(?:code|kode\w*|c\u00f3digo|kod\w*)|passcode"
            r"|(?:door|alarm|disarm|arming|installer|gate|keypad|garage|voicemail|lockbox)"
            r"[ \t-]?(?:code|pin))\b|\u092a\u093f\u0928|\u6697\u8a3c\u756a\u53f7)"
            r"(?:[ \t]*[:=#-]?[ \t]*|[^\n]{0,40}?\b(?:is|was|to|are|now|e|"
            + _COPULAS
            + r")[ \t]*:?[ \t]*)"
            r"(?<![\w.#-])(?P<secret>\d{4,12})(?![\w-]|\.\d)"
        ),
        ("puk", "pin", "passcode", "code", "\u092a\u093f\u0928", "\u6697\u8a3c\u756a\u53f7"),
        folded=True,
        reach=LINES,
    ),
    _provider("databricks_token", r"(?P<secret>dapi[a-f0-9]{32}(?:-\d)?)" + _E, "dapi"),
    _provider(
        "new_relic_key",
        r"(?P<secret>NRAK-[A-Z0-9]{27}|NRII-[\w-]{32})"
        + _E
        + r"|NRAL(?<=(?<![\w-])[a-z0-9]{36}NRAL)"
        + _E,
        "NRAK-",
        "NRII-",
        "NRAL",
        span_of=_back("NRAL", 36),
    ),
    _provider("sentry_token", r"(?P<secret>sntry[us]_[\w=+/-]{40,})", "sntry"),
    _provider(
        "sentry_dsn",
        r"https?://(?P<secret>[a-f0-9]{32})(?::[a-f0-9]{32})?@[\w.-]+/\d+",
        "://",
        after=r"\w",
    ),
    _provider(
        "grafana_token",
        r"(?P<secret>glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}|glc_[\w+/]{32,}={0,2})",
        "glsa_",
        "glc_",
    ),
    _provider("facebook_access_token", r"(?P<secret>EAA[BCGI][A-Za-z0-9]{100,})", "EAA"),
    _provider("twitter_bearer_token", r"(?P<secret>A{21}[A-Za-z0-9%]{30,})", "A" * 21, after=None),
    _provider(
        "cloudflare_origin_ca_key",
        r"(?P<secret>v1\.0-[a-f0-9]{24}-[a-f0-9]{146})",
        "v1.0-",
    ),
    _provider("jwt", r"(?P<secret>eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{16,})", "eyJ"),
    _provider("netlify_token", r"(?P<secret>nfp_[A-Za-z0-9]{36,})", "nfp_"),
    _provider("artifactory_api_key", r"(?P<secret>AKCp[A-Za-z0-9]{60,})", "AKCp"),
    _provider(
        "supabase_token",
        r"(?P<secret>sbp_[a-f0-9]{40}|sb_secret_[\w-]{20,})",
        "sbp_",
        "sb_secret_",
    ),
    _provider(
        "planetscale_token",
        r"(?P<secret>pscale_(?:pw|tkn|oauth)_[\w.-]{32,})",
        "pscale_",
    ),
    _provider("render_api_key", r"(?P<secret>rnd_[A-Za-z0-9]{32,})" + _E, "rnd_"),
    _provider("mapbox_secret_token", r"(?P<secret>sk\.eyJ[\w.-]{60,})", "sk.eyJ"),
    _provider("flyio_token", r"(?P<secret>fm[12][ar]?_[\w+/=-]{40,})", "fm1", "fm2"),
    _provider(
        "azure_connection_key",
        r"(?i)\b(?:AccountKey|SharedAccessKey|SharedSecretValue)\s*=\s*"
        r"(?P<secret>[A-Za-z0-9+/]{20,}={0,2})",
        "accountkey",
        "sharedaccesskey",
        "sharedsecretvalue",
        folded=True,
        after=None,
    ),
    _provider("azure_sas_signature", r"[?&;]sig=(?P<secret>[\w%+/=-]{16,})", "sig=", after=None),
    Rule(
        "base64_secret",
        _rx(r"(?<![\w+/-])[A-Za-z0-9+/_-]{16,}={0,2}(?![\w+/=-])"),
        ("",),
        span_of=_base64_secret,
        # base64 of text: every fourth character encodes a byte's top six bits, and a tab, a
        # line break or a printable ASCII byte puts them in C, D or I-f
        gated=_rx(
            r"(?<![\w+/-])(?=[A-Za-z0-9+/_-]{16})(?:[CDI-Za-f][A-Za-z0-9+/_-]{3})+"
            r"(?:[CDI-Za-f][A-Za-z0-9+/_-]{0,2})?={0,2}(?![\w+/=-])"
        ),
        run=16,
    ),
    Rule(
        "random_token",
        _rx(r"(?<![\w.~-])[A-Za-z0-9][\w.~-]{18,}(?<=[\w~])=*(?![\w.~-])"),
        ("",),
        span_of=_random_token,
        run=19,
    ),
    Rule(
        "password_shaped",
        # a whole token (between spaces, quotes, brackets, commas) holding a symbol of _PW_STRONG
        # one of the symbols it needs, in a token of 10 or more characters (5 of them on one side
        # of it); span_of reads the token around it
        _rx(r"[!@#$%^&*?~](?:(?<=[^\s'\"`<>()\[\]{},;|]{6})|(?=[^\s'\"`<>()\[\]{},;|]{5}))"),
        ("",),
        span_of=_password_shaped,
    ),
    # --------------------------------------------------------------------- context rules
    Rule(
        "url_password",
        _rx(
            r"://(?<=[a-z0-9+.-]://)[^\s:/@'\"<>]*:(?P<secret>[^\s/'\"<>]{3,}?)@"
            r"(?=[\w.-]+(?:[:/?\s'\"]|$))"
        ),
        ("://",),
        span_of=_value(),
        reach=LINES,
    ),
    Rule(
        "basic_auth",
        _rx(r"(?i)\bBasic\s+(?P<secret>[A-Za-z0-9+/]{8,}={0,2})(?![\w+/=])"),
        ("basic",),
        folded=True,
        span_of=_basic,
        reach=LINES,
    ),
    Rule(
        "bearer_token",
        _rx(r"(?i)\bBearer\s+(?P<secret>[\w.~+/-]{8,}=*)"),
        ("bearer",),
        folded=True,
        span_of=_bearer,
        reach=LINES,
    ),
    Rule(
        "auth_header",
        _rx(
            r"(?im)(?:^|[\s{'\"])(?:Authorization|X-Auth-Key|X-Api-Key|Api-Key|X-Vault-Token|"
            r"PRIVATE-TOKEN|X-Shopify-Access-Token|DD-API-KEY|DD-APPLICATION-KEY|"
            r"X-JFrog-Art-Api)['\"]?\s*:\s*['\"]?(?:[A-Za-z][\w-]{1,24}[ \t]+|key=)?"
            r"(?P<secret>[\w.~+/=-]{16,})"
        ),
        ("authorization", "-key", "-token", "-api"),
        folded=True,
        span_of=_value(),
        reach=LINES,
    ),
    Rule(
        "query_token",
        _rx(r"[?&#;](?P<name>[\w.-]{2,40})=(?P<secret>[^&\s#\"'<>]{8,})"),
        ("=",),
        span_of=_query_value,
    ),
    Rule(
        "mysql_password_flag",
        _rx(r"\bmysql(?:dump|admin|import|sh)?\b[^\n]*?[\s\"',]-p(?P<secret>" + _PW + r"+)"),
        ("mysql",),
        span_of=_value(),
        reach=LINES,
    ),
    Rule(
        "cli_password_flag",
        _rx(
            r"(?:\bsshpass\s+-p\s*|\b(?:docker|podman|helm|oras)\s+(?:registry\s+)?login\b"
            r"[^\n]*?\s-p\s+|\bredis-cli\b[^\n]*?\s-a\s+|\blogin\s+-p\s+|"
            r"\s-p\s+(?=\S*\d)(?=[^\n]*--tenant)|\bsecrets?[ \t]+set\b[^\n]*?\s(?:--body|-b)[ \t]+)"
            r"['\"]?(?P<secret>" + _PW + r"{4,})"
        ),
        ("sshpass", "login", "redis-cli", "--tenant", "secret"),
        span_of=_value(),
        reach=LINES,
    ),
    Rule(
        "long_flag",
        _rx(
            r"(?i)--(?<![\w-]--)(?:password|passwd|pass|token|access-token|auth-token|api-key|"
            r"apikey|client-secret|secret|auth|postman-api-key)(?:=|\s+)['\"]?"
            r"(?P<secret>" + _PW + r"{6,})"
        ),
        ("--",),
        folded=True,
        span_of=_value(),
    ),
    Rule(
        "secret_flag",
        _rx(
            r"(?<![\w-])--?(?P<name>[A-Za-z][\w.-]{2,40})(?P<op>=|[ \t]+)(?P<q>['\"]?)"
            r"(?P<secret>[^\s'\"`]{4,})"
        ),
        _NAME_LITERALS,
        folded=True,
        span_of=_secret_flag,
        reach=LINES,
    ),
    Rule(
        "short_flag_secret",
        _rx(r"(?<![\w-])-[pwkaP][ \t]+['\"]?(?P<secret>[^\s'\"`]{8,})"),
        ("-p ", "-w ", "-k ", "-a ", "-P ", "-p\t", "-w\t", "-k\t", "-a\t", "-P\t"),
        span_of=_value(strict=True),
        reach=LINES,
    ),
    Rule(
        "auth_command_token",
        _rx(
            r"(?i)\b(?:login|auth|authenticate|add-authtoken|authorize-account|set-token)"
            r"(?:[ \t]+[\w.@-]{1,40}?)?[ \t]+['\"]?(?P<secret>[\w.~+/=-]{16,})"
        ),
        ("login", "auth", "set-token"),
        folded=True,
        span_of=_command_token,
        reach=LINES,
    ),
    Rule(
        "user_colon_password",
        _rx(
            r"(?:\bcurl\b[^\n]*?\s(?:-[A-Za-z]*u|--user|--proxy-user)|\bClient\("
            r"|(?<![\w-])--?(?:auth|basic-auth|http-user|creds|credentials)"
            r"|\bstats[ \t]+auth|\bCURLOPT_(?:PROXY)?USERPWD[ \t]*,)"
            r"\s*=?\s*['\"]?(?P<user>[^\s:'\",]+)['\"]?[ \t]*[:,][ \t]*['\"]?(?P<secret>"
            + _PW
            + r"*)"
        ),
        ("curl", "Client(", "-auth", "-cred", "-http-user", "stats auth", "USERPWD"),
        span_of=_user_password,
        reach=LINES,
    ),
    Rule(
        "conninfo_password",
        _rx(r"(?i)\bpassword=(?P<secret>[^\s'\";&]+)"),
        ("password=",),
        folded=True,
        span_of=_value(),
        reach=LINES,
    ),
    Rule(
        "ssh_keygen_passphrase",
        _rx(r"\bssh-keygen\b[^\n]*?\s-[NP]\s+(?P<q>['\"]?)(?P<secret>[^\s'\"]+)(?P=q)"),
        ("ssh-keygen",),
        span_of=_value(),
        reach=LINES,
    ),
    Rule(
        "htpasswd_password",
        _rx(r"\bhtpasswd\s+(?:-\w+\s+)*-\w*b\w*\s+(?:-\w+\s+)*\S+\s+\S+\s+(?P<secret>\S+)"),
        ("htpasswd",),
        span_of=_value(),
        reach=LINES,
    ),
    Rule(
        "rabbitmq_password",
        _rx(r"\brabbitmqctl\s+(?:add_user|change_password)\s+\S+\s+['\"]?(?P<secret>[^\s'\"]+)"),
        ("rabbitmqctl",),
        span_of=_value(),
        reach=LINES,
    ),
    Rule(
        "pgpass_line",
        _rx(
            r"(?m)^[ \t]*[\w.*\[\]:-]{1,255}?:(?:\d{1,5}|\*):[^:\s]{1,128}:[^:\s]{1,128}:"
            r"(?P<secret>[^\s:/]{1,128})[ \t]*$"
        ),
        (":5432:", ":*:"),
        reach=LINES,
        span_of=_pgpass,
    ),
    Rule(
        "net_use_password",
        _rx(
            r"(?i)\bnet[ \t]+use\b[^\n]{0,200}?[ \t]"
            r"(?:\\\\[^\s/]{1,200}|/u(?:ser)?:\S{1,200})[ \t]+(?P<secret>[^\s/\\\"][^\s]*)"
        ),
        ("net use",),
        folded=True,
        span_of=_net_use,
        reach=LINES,
    ),
    Rule(
        "snmp_community",
        _rx(
            r"(?i)\b(?:snmp-server[ \t]+community|r[ow]community6?"
            r"|community[ \t]+string[ \t]*(?:[:=]|\bis\b)"
            r"|snmp(?:walk|get|getnext|bulkwalk|bulkget|set|table|trap)\b[^\n]{0,200}?[ \t]-c)"
            r"[ \t:=]*['\"]?(?P<secret>[^\s'\"]+)"
        ),
        ("community", "snmp"),
        folded=True,
        span_of=_community,
        reach=LINES,
    ),
    Rule(
        "irc_password",
        _rx(
            r"(?im)(?<![\w/])/(?:oper[ \t]+\S+|(?:msg[ \t]+)?(?:nickserv|ns)[ \t]+identify"
            r"(?:[ \t]+\S+)?(?=[ \t]+\S+[ \t]*$))[ \t]+(?P<secret>\S+)"
        ),
        ("/oper", "identify"),
        folded=True,
        span_of=_value(),
        reach=LINES,
    ),
    Rule(
        "sql_setting_value",
        _rx(
            r"(?i)\bSET[ \t]+\w+[ \t]*=[ \t]*N?'(?P<secret>[^'\n]+)'[ \t]+WHERE[ \t]+[\w.]+[ \t]*="
            r"[ \t]*N?'(?P<name>[^'\n]{1,80})'"
            r"|\bVALUES[ \t]*\([ \t]*N?'(?P<vname>[^'\n]{1,80})'[ \t]*,[ \t]*"
            r"N?'(?P<vsecret>[^'\n]+)'"
        ),
        ("where", "values"),
        folded=True,
        span_of=_sql_setting,
        reach=LINES,
    ),
    Rule(
        "token_flag_uuid",
        _rx(
            r"(?<![\w-])-t[ \t]+['\"]?(?P<secret>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}"
            r"-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})(?![\w-])"
        ),
        ("-t ",),
        reach=LINES,
        context=("codecov",),
    ),
    Rule(
        "positional_password",
        _rx(r"\bpoetry[ \t]+config[ \t]+http-basic\.\S+[ \t]+\S+[ \t]+['\"]?(?P<secret>[^\s'\"]+)"),
        ("http-basic",),
        folded=True,
        span_of=_value(),
    ),
    Rule(
        "sasl_passwd_line",
        _rx(
            r"(?m)^[ \t]*\[?[\w.-]+\]?(?::\d{1,5})?[ \t]+[^\s:\[]{1,128}:"
            r"(?P<secret>\S{1,128})[ \t]*$"
        ),
        (":",),
        context=("sasl_passwd",),
        span_of=_value(),
    ),
    Rule(
        "char_array_secret",
        _rx(
            r"(?<![\w$])(?P<name>[A-Za-z_]\w{0,63})(?:[ \t]*\[\])?[ \t]*=[ \t]*"
            r"(?:new[ \t]+char[ \t]*\[\][ \t]*)?\{"
            r"(?P<secret>(?:[ \t]*'[^'\\\n]'[ \t]*,){5,}[ \t]*'[^'\\\n]')[ \t]*,?[ \t]*\}"
        ),
        ("{",),
        span_of=_char_array,
        reach=LINES,
    ),
    Rule(
        "sql_password",
        _rx(
            r"(?i)\b(?<!['\"])(?:(?:(?:UN)?ENCRYPTED\s+)?PASSWORD(?:\s*=)?\s*N?'(?P<secret>[^'\n]+)'"
            r"|IDENTIFIED\s+BY(?:\s+PASSWORD)?\s*(?:N?'(?P<by>[^'\n]+)'|\"(?P<dq>[^\"\n]+)\"))"
        ),
        ("password", "identified"),
        folded=True,
        span_of=_sql_password,
        reach=LINES,
    ),
    Rule(
        "azure_devops_pat",
        _rx(
            r"(?i)(?:\bado\b|azure[_ -]?devops|\bpat\b)[^\n]{0,40}?[:=]\s*"
            r"(?P<secret>(?-i:[a-z2-7]{52}))(?![a-z2-7])"
        ),
        ("ado", "devops", "pat"),
        folded=True,
        reach=LINES,
    ),
    Rule(
        "aws_secret_access_key",
        _rx(r"(?<![\w+/=])(?P<secret>(?=[\w+/]*[+/])[A-Za-z0-9+/]{40})(?![\w+/=])"),
        ("/", "+"),
        context=("aws", "secret", "s3", "iam", "boto", "access key"),
        reach=40,
    ),
    Rule(
        "hex_key",
        _rx(
            r"(?i)\b(?:api[\s_-]?key|app[\s_-]?key|key|secret|token|password|passwd|"
            r"license[\s_-]?key)(?:[^\n.;]{0,40}?\b(?:is|was)\s+|\s*(?:[:=]|->)\s*|\s+)['\"]?"
            r"(?P<secret>(?-i:[0-9a-f]{20,64}))\b"  # lower-case hex: upper is a GPG fingerprint
        ),
        ("key", "secret", "token", "passw"),
        folded=True,
        reach=LINES,
    ),
    Rule(
        "auth_base64",
        _rx(r"(?i)[\"']?_?auth[\"']?\s*[:=]\s*[\"']?(?P<secret>[A-Za-z0-9+/]{8,}={0,2})"),
        ("auth",),
        folded=True,
        span_of=_auth_base64,
        reach=LINES,
    ),
    Rule(
        "session_cookie",
        _rx(
            r"(?i)(?:\b(?:set-)?cookie['\"]?[ \t]*[:=][ \t]*['\"]?"
            r"|(?<![\w-])(?:-b|--cookie)[ \t]+['\"]?"
            r"|(?<![\w.-])(?=[\w.-]{1,80}=[^;\s'\"`]{8,};[ \t]*(?:path|domain|expires|max-age"
            r"|httponly|secure|samesite)\b))(?P<pairs>[^\n'\"]+)"
        ),
        ("cookie", "-b ", "; path", "; httponly", "; secure", "; samesite", "; domain"),
        folded=True,
        span_of=_session_cookie,
        reach=LINES,
    ),
    Rule(
        "protocol_login",
        _rx(
            # (upper-case, as the protocols spell them: ``npm login --scope`` is no IMAP)
            r"(?m)^(?:[^\s>]{0,40}>[ \t]*|[CcSs]:[ \t]*)?(?:[\w.*-]{1,20}[ \t]+LOGIN[ \t]+"
            r"(?:\"[^\"\n]*\"|\S+)|AUTH(?:[ \t]+(?!PLAIN\b|LOGIN\b|CRAM-MD5\b|XOAUTH2?\b)\S+)?)"
            r"[ \t]+(?P<q>\"?)(?P<secret>[^\s\"]{4,})(?P=q)[ \t]*\r?$"
        ),
        ("login", "auth"),
        folded=True,
        span_of=_protocol_login,
        reach=LINES,
    ),
    Rule(
        "dsn_password",
        _rx(r"(?<![\w/:@.-])[\w.-]{1,64}:(?P<secret>[^\s@/'\"()]{3,}?)@(?:tcp|unix|udp)\("),
        ("@tcp(", "@unix(", "@udp("),
        span_of=_value(),
        reach=LINES,
    ),
    Rule(
        "pgpass",
        _rx(r"(?m)[\w.*-]+:(?:\d+|\*):[\w*.-]+:[\w*.-]+:(?P<secret>[^\s:]\S*)$"),
        (":",),
        context=("pgpass",),
    ),
    Rule(
        "secret_assignment",
        _ASSIGN,
        (*_NAME_LITERALS, "auth", "login"),
        folded=True,
        span_of=_assignment,
        reach=LINES,
    ),
    Rule(
        "secret_directive",
        _rx(
            r"(?:^|(?<=[ \t;]))(?P<name>[A-Za-z_/][\w.:/@-]{1,100})[ \t]+(?P<q>['\"]?)"
            r"(?P<secret>[^\s'\"`()\[\]{}<>]{4,200})(?P=q)"
            r"(?=[ \t]*(?:$|[;#\n]|\([^()\n]*\)[ \t]*$))",
            re.MULTILINE,
        ),
        _NAME_LITERALS,
        folded=True,
        span_of=_directive,
        reach=LINES,
    ),
    Rule(
        "spoken_secret",
        _rx(
            r"(?i)\b(?P<kind>(?:pin(?:[ \t]+(?:code|number))?|passcode|pass[ \t]+code"
            r"|combination|(?:door|gate|alarm|access|entry|unlock|safe|lock|garage|keypad)"
            r"[ \t]+code)s?)\b[^\n.;]{0,40}?(?:\bis\b|:|=)[ \t]*['\"`]?"
            r"(?P<secret>[\w#*-]*\d[\w#*-]*)"
            r"|\b(?:recovery|backup|one-time|2fa|mfa|scratch)[ \t]+(?P<codes>codes?)\b[^\n:]{0,60}:"
            r"[ \t]*(?P<list>[A-Za-z0-9]{4,10}(?:-[A-Za-z0-9]{4,10})*"
            r"(?:[ \t]*,[ \t]*[A-Za-z0-9]{4,10}(?:-[A-Za-z0-9]{4,10})*)*)"
            r"|\b(?P<chunk>pass(?:word|phrase|code)?|secret|key|code|token|pin)\b[^\n]{0,60}?"
            r"(?::|\bis\b|=)[ \t]*['\"`]?(?P<grouped>[A-Za-z0-9]{4}(?P<sep>[ -])[A-Za-z0-9]{4}"
            r"(?:(?P=sep)[A-Za-z0-9]{4}){2,7})(?![\w-])"
            r"|\b(?P<seed>seed(?:[ \t]+(?:phrase|words))?|mnemonic"
            r"|(?:recovery|secret|backup|wallet)[ \t]+(?:phrase|words))\b"
            r"[^\n:=]{0,50}[:=][ \t]*['\"]?"
            r"(?P<words>[a-z]{3,8}(?:[ \t]+[a-z]{3,8}){11,23})\b"
        ),
        ("pin", "code", "combination", "pass", "secret", "key", "token", "seed", "mnemonic"),
        folded=True,
        span_of=_spoken,
        reach=LINES,
    ),
    Rule(
        "url_path_token",
        _rx(r"\bhttps?://[^\s/?#'\"<>]+(?P<path>/[^\s?#'\"<>)\]]*)"),
        ("://",),
        span_of=_url_path_token,
        reach=LINES,
        # a path with a keyword segment before another segment, or a UUID / hex whole path
        gated=_rx(
            r"\bhttps?://[^\s/?#'\"<>]+(?P<path>(?=(?:/[^\s?#'\"<>)\]/]*)*?"
            r"/(?i:hooks?|webhooks?|inputs|catch|keys?|tokens?|secrets?|apikey)/[^/\s?#'\"<>)\]]"
            r"|/[0-9a-fA-F-]{32,}/*(?![^\s?#'\"<>)\]]))/[^\s?#'\"<>)\]]*)"
        ),
    ),
    Rule(
        "command_password",
        _rx(
            r"(?<![\w-])(?P<flag>-(?:hp|passin|passout|pass|P|p|w|k|t|U|u))"
            r"(?P<sep>[ \t]+|(?=[^\s-]))['\"]?(?P<secret>[^\s'\"]+)"
        ),
        _COMMAND_NAMES,
        span_of=_command_password,
        reach=LINES,
    ),
    Rule(
        "login_string_password",
        _rx(
            r"(?:(?<![\w./-])(?:sqlplus|rman|expdp|impdp|sqlldr|dgmgrl)(?:[ \t]+-\w+)*[ \t]+['\"]?"
            # (SQL> anywhere: a save or a digest puts a bullet or an indent before the prompt)
            r"|oracle:thin:|(?i:(?:(?m:^)|SQL>)[ \t]*conn(?:ect)?[ \t]+))"
            r"[\w$#.]+/(?P<secret>[^\s@/'\"]+)(?=@|[ \t'\"]|$)"
        ),
        # (CONNECT / CONN as sqlplus prints them: "connect" would window every "connection")
        (
            *("sqlplus", "rman", "expdp", "impdp", "sqlldr", "dgmgrl", "oracle:thin:", "SQL>"),
            *("CONNECT ", "CONN ", "conn "),
        ),
        span_of=_value(),
        reach=LINES,
    ),
    Rule(
        "piped_password",
        _rx(
            r"(?<![\w-])(?:echo|printf)[ \t]+(?:-[neE]{1,3}[ \t]+)*"
            r"(?:(?P<q>['\"])(?P<qv>[^'\"\n]+)(?P=q)|(?P<v>[^\s'\"|;&<>]+))"
            r"[ \t]*\)?[ \t]*(?P<op>\|(?!\|)|>>?|;(?=[^\n|]*\)[ \t]*\|))[ \t]*(?P<rest>[^\n]*)"
            r"|<<<[ \t]*(?:(?P<hq>['\"])(?P<hqv>[^'\"\n]+)(?P=hq)|(?P<hv>[^\s'\"|;&<>]+))"
        ),
        ("echo", "printf", "<<<"),
        span_of=_piped_password,
        reach=LINES,
    ),
    Rule(
        "expect_send",
        _rx(
            r"(?i)\bexpect[ \t]+(?:-\w+[ \t]+)*\"[^\"\n]*(?:pass|secret|token|pin)[^\"\n]*\""
            r"[ \t]*(?:;|\r?\n)[ \t]*(?:exp_)?send[ \t]+(?:--[ \t]+)?"
            r"\"(?P<secret>(?:[^\"\\\n]|\\[^rn])+?)(?:\\[rn])?\""
        ),
        ("expect",),
        folded=True,
        span_of=_expect_send,
        reach=LINES,
    ),
    Rule(
        "credential_call",
        _rx(
            r"(?:\b(?:[A-Za-z_][\w.$]*)?(?:Credential|Auth|Login|login|Connection|connect|Connect)"
            r"\w*|\bauth[ \t]*=[ \t]*|\bnew[ \t]+(?:PDO|mysqli)|\bPDO->__construct|\bbasic_auth"
            r"|\bSMTP\.start|\balgoliasearch)"
            r"(?:[ \t]*\((?P<args>[^()\n]{0,300})(?:\)|(?=\n)|$)"
            r"|[ \t]+(?=['\"])(?P<bare>[^()\n]{0,300}))"
        ),
        (
            *("Credential", "Auth", "Login", "login", "onnect", "auth", "PDO", "mysqli"),
            *("SMTP.start", "algoliasearch"),
        ),
        span_of=_credential_call,
        reach=LINES,
    ),
    Rule(
        "setter_secret",
        _rx(
            r"(?<![\w$])(?P<name>[A-Za-z_]\w*)[ \t]*\([ \t]*(?P<q>['\"])(?P<secret>[^'\"\n]+)"
            r"(?P=q)[ \t]*\)|(?i:ConvertTo-SecureString)[ \t]+(?:-String[ \t]+)?(?P<sq>['\"])"
            r"(?P<svalue>[^'\"\n]+)(?P=sq)"
        ),
        (*_NAME_LITERALS, "securestring", "auth("),
        folded=True,
        span_of=_setter,
        reach=LINES,
    ),
    Rule(
        "named_argument",
        _rx(
            r"\([ \t]*(?P<nq>['\"])(?P<name>[\w.:-]{2,80})(?P=nq)"
            r"[ \t]*,[ \t]*(?P<q>['\"])(?P<secret>[^'\"\s]{4,300})(?P=q)"
        ),
        _NAME_LITERALS,
        folded=True,
        span_of=_named_argument,
        reach=LINES,
    ),
    Rule(
        "named_value",
        _rx(
            r"(?i)(?<![\w-])(?:name|key)['\"]?[ \t]*[:=][ \t]*(?P<nq>['\"]?)"
            r"(?P<name>[\w.:-]{2,80}?)(?P=nq)[ \t]*[,;]?[ \t]*(?:\r?\n[ \t]*(?:-[ \t]+)?)?"
            r"['\"]?value['\"]?[ \t]*[:=][ \t]*"
            r"(?:(?P<q>['\"])(?P<qv>[^'\"\n]+)(?P=q)|(?P<v>[^\s'\",;}{)\]<>]+))"
        ),
        ("name", "key"),
        folded=True,
        span_of=_named_value,
        reach=LINES,
    ),
    Rule(
        "element_value",
        _rx(
            r"<(?P<kt>[Kk]ey)>(?P<key>[^<>\n]{1,80})</(?P=kt)>\s*"
            r"<(?P<vt>string|[Vv]alue)(?:[ \t][^<>\n]*)?>"
            r"(?:<!\[CDATA\[(?P<vcdata>[^\n]{1,300}?)\]\]>|(?P<value>[^<>\n]{1,300}))</(?P=vt)>"
            r"|<(?P<tag>(?:[\w-]+:)?[A-Za-z_][\w.-]*)(?P<attrs>[ \t][^<>\n]*)?>"
            r"(?:<!\[CDATA\[(?P<cdata>[^\n]{1,300}?)\]\]>|(?P<secret>[^<>\n]{1,300}))"
            r"</(?P=tag)[ \t]*>"
        ),
        ("</",),
        span_of=_element_value,
        reach=LINES,
    ),
    Rule(
        "table_column",
        _rx(
            r"(?m)^[^\n|]*\|(?P<head>[^\n]*\|)[ \t]*\r?\n[ \t]*\|[ \t]*:?-{3,}[-:| \t]*\r?\n"
            r"(?P<body>(?:[ \t]*\|[^\n]*(?:\n|$))+)"
        ),
        ("|-", "| -", "|:"),
        span_of=_table_column,
    ),
    Rule(
        "csv_column",
        _rx(r"(?m)^(?P<head>[^,\n]{1,60}(?:,[^,\n]{0,60}){1,20})\r?\n(?P<row>[^\n]+)"),
        ("pass", "secret", "token", "key", "pwd"),
        folded=True,
        span_of=_csv_column,
        reach=LINES,
    ),
    Rule(
        "user_slash_password",
        _rx(
            r"(?i)\b(?:login|logins|creds?|credentials|account)\b[^\n]{0,50}?(?::|->|\bis\b|\bare\b)\s*"
            r"[\w.@+-]+\s+/\s+(?P<secret>[^\s'\"`,;()]{6,})"
        ),
        ("login", "cred", "account"),
        folded=True,
        span_of=_value(),
        reach=LINES,
    ),
    Rule(
        "slashed_login",
        _rx(
            r"(?<![\w/.@+-])[`'\"]?(?P<user>[\w.@+-]{2,64})[`'\"]?[ \t]+/[ \t]+[`'\"]?"
            r"(?P<secret>[^\s'\"`,;()]{6,64})"
        ),
        (" / ", "\t/", "/\t"),
        span_of=_slashed_pair,
        reach=LINES,
    ),
    Rule(
        "prose_secret",
        _rx(
            r"(?i)(?<![a-z0-9])(?P<word>pass(?:word|wd|phrase)?|pw|pwd|secret(?:\s+(?:access\s+)?key)?|"
            r"api[\s_-]?key|token|key|creds?|credentials)(?![a-z])" + _PROSE_TAIL
        ),
        ("pass", "pw", "secret", "key", "token", "cred"),
        folded=True,
        span_of=_prose,
        reach=LINES,
    ),
    Rule(
        "said_password",
        _rx(r"(?i)(?<![a-z0-9])(?P<word>pass(?:word|wd|phrase)|pwd)(?![a-z])"),
        ("pass", "pwd"),
        folded=True,
        span_of=_said_password,
        reach=LINES,
    ),
    Rule(
        "foreign_prose_secret",
        _rx(r"(?i)(?<![a-z0-9])(?P<word>" + _PASSWORD_WORDS + r")(?![a-z])"),
        _PASSWORD_LITERALS,
        folded=True,
        span_of=_foreign_prose,
        reach=LINES,
    ),
    Rule(
        "escaped_secret",
        # (lines where a quote or a character is escaped: &amp; &lt; \\ alone hide no value
        # from the rules, and every changelog has them)
        _rx(r"(?m)^[^\n]*(?:\\[\"'u]|&(?:quot|apos|#\d{1,7}|#[xX][0-9A-Fa-f]{1,6});)[^\n]*"),
        ('\\"', "\\'", "\\u", "&quot;", "&apos;", "&#"),
        reach=LINES,
        span_of=_escaped_secret,
    ),
    Rule(
        "urlencoded_secret",
        # a whole line, from its start: a search from inside a line (after a line that held
        # nothing) would decode and search each of its suffixes again
        _rx(r"(?m)^[^\n]*%[0-9A-Fa-f]{2}[^\n]*"),
        ("%",),
        span_of=_urlencoded_secret,
    ),
)


# ----------------------------------------------------------------------------- public material

PUBLIC = _rx(
    r"-----BEGIN (?P<pem>(?:RSA |EC |DSA |OPENSSH |SSH2 |PGP )?PUBLIC KEY(?: BLOCK)?)-----"
    r"[\sA-Za-z0-9+/=:-]*?-----END (?P=pem)-----"
    r"|(?<![\w-])(?:ssh-(?:ed25519|rsa|dss)|ecdsa-sha2-nistp\d{3}|sk-(?:ssh-ed25519|ecdsa-sha2-"
    r"nistp256)@openssh\.com)[ \t]+AAAA[A-Za-z0-9+/]{20,}={0,2}(?![\w+/=])"
    r"|(?<![\w-])age1[02-9ac-hj-np-z]{58}(?![\w-])"
    r"|(?<![\w-])SHA256:[A-Za-z0-9+/]{43}(?![\w+/])"
    r"|(?<![\w:])(?:MD5:)?[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){15}(?![\w:])"
    r"|/nix/store/[0-9a-df-np-sv-z]{32}-[\w.+-]*"
    r"|(?<=[ \t])h1:[A-Za-z0-9+/]{43}="
    r"|(?<![\w-])arn:aws[\w-]*:[\w-]+:[\w-]*:\d{12}:[^\s'\"`<>]+"
    r"|(?<![\w-])ocid1\.[a-z0-9]+\.oc\d+\.[a-z0-9-]*\.[a-z0-9]+(?![\w.-])"
    r"|(?<![\w-])bafy[a-z2-7]{50,}(?![\w-])"
    r"|(?<![\w-])0x[0-9a-fA-F]{40}(?![\w-])"
    r"|\.vault\.azure\.net/(?:secrets|keys|certificates)/[\w-]+/[0-9a-f]{32}(?![\w-])"
    r"|(?m:^[ \t]*Public-Lines:[ \t]*\d+[ \t]*(?:\r?\n[ \t]*[A-Za-z0-9+/=]+(?=[ \t]*(?:\r?\n|$)))+)"
)
"""Public material: values found wholly inside a match are kept (see "Public material")."""
PUBLIC_LITERALS = (
    "PUBLIC KEY",
    "ssh-",
    "ecdsa-",
    "age1",
    "SHA256:",
    ":",
    "/nix/store/",
    "h1:",
    "arn:aws",
    "ocid1.",
    "bafy",
    "0x",
    ".vault.azure.net/",
)
"""One of these occurs in every match of ``PUBLIC`` (case as written)."""
MASKED = lazyre.compile(r"(?:[A-Za-z0-9]*[_.-])*([xX*#\u2022])\1{5,}")
"""A found value that is a mask, whatever rule found it: a run of one mask character, after a
provider's prefix or not (``ghp_xxxx…``, ``sk_live_****…``)."""


def __getattr__(name: str) -> Any:
    """``SECRET_PATTERNS``: ``(kind, compiled pattern)`` for every rule, in the order they run
    (the kinds of the docstring), compiled when asked for (the filter itself compiles a rule's
    pattern only when a text needs it)."""
    if name == "SECRET_PATTERNS":
        return tuple(
            (rule.kind, re.compile(rule.pattern.pattern, rule.pattern.flags)) for rule in RULES
        )
    raise AttributeError(name)
