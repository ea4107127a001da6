"""Token-shaped fakes for the secret filter's tests, assembled from pieces at import time so
that no file in the repository holds a token-shaped literal (secret scanners and push
protection would flag it otherwise)."""

from __future__ import annotations

AWS_KEY_ID = "AK" + "IA" + "Z3Q7XK2M4N5P6R7T"
AWS_SESSION_KEY_ID = "AS" + "IA" + "Z3Q7XK2M4N5P6R7T"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "Q1w2E3r4T5"  # 40 chars
GH_CLASSIC = "gh" + "p_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
GH_OAUTH = "gh" + "o_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
GH_USER = "gh" + "u_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
GH_SERVER = "gh" + "s_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
GH_REFRESH = "gh" + "r_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
GH_PAT = "github" + "_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789AB"
ANTHROPIC = "sk-" + "ant-" + "api03-" + "Xy9_Kq2-Lm3Np4Qr5St6Uv7Wx8Yz9Ab0Cd1Ef2"
OPENAI = "sk-" + "Qw3rTy7UiOp1AsDf5GhJk9LzXc2VbNm4QwErTy6UiOp8As"
OPENAI_PROJ = "sk-" + "proj-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv"
SLACK = "xo" + "xb-" + "1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUv"
SLACK_USER = "xo" + "xp-" + "1234567890-0987654321-AbCdEfGhIjKl"
GOOGLE = "AI" + "za" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"  # AIza + 35
STRIPE = "sk" + "_live_" + "51H8xYz2Ab3Cd4Ef5Gh6Ij7Kl"
STRIPE_RESTRICTED = "rk" + "_live_" + "51H8xYz2Ab3Cd4Ef5Gh6Ij7Kl"
JWT = (
    "ey" + "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".ey" + "JzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM_BODY = [
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK",
    "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo",
]
PEM_KEY = "\n".join(
    ["-----BEGIN " + "RSA PRIVATE KEY-----", *PEM_BODY, "-----END RSA PRIVATE KEY-----"]
)
