"""The line patterns of the install audit, as data.

Each ``LineRule`` names a risk, the regular expression that finds it on one line, and its
severity in executable files (``scripts/``, a shebang, a script extension or the executable
bit) and in documents (SKILL.md, references). Instructions in a document are only run if an
agent follows them, and real skills legitimately show installers such as ``curl ... | sh``,
so the same text blocks in a script and needs approval in a document.

Patterns run over whole files (``^``/``$`` are line anchors, whitespace never spans lines)
and are written without nested quantifiers, so a hostile multi-megabyte line cannot make the
scan slow.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

Severity = Literal["block", "warn"]
Applies = Literal["all", "markdown"]


@dataclass(frozen=True, slots=True, kw_only=True)
class LineRule:
    """One pattern and how bad a match is in a script and in a document."""

    rule: str
    pattern: re.Pattern[str]
    in_script: Severity
    in_doc: Severity
    message: str
    applies: Applies = "all"
    #: Lowercase substrings one of which every match contains; lines without any are skipped
    #: (a substring search is ~30x cheaper than a regex that starts with ``\b``).
    keywords: tuple[str, ...] = ()

    def finditer(self, text: str, lower: str) -> Iterator[re.Match[str]]:
        """Matches in ``text`` (``lower`` is ``text.lower()``, shared by every rule)."""
        return _finditer(self.pattern, self.keywords, text, lower)


@dataclass(frozen=True, slots=True, kw_only=True)
class Probe:
    """A pattern used in combination with others (secret reads, network sends)."""

    pattern: re.Pattern[str]
    keywords: tuple[str, ...] = ()

    def finditer(self, text: str, lower: str) -> Iterator[re.Match[str]]:
        """Matches in ``text`` (``lower`` is ``text.lower()``)."""
        return _finditer(self.pattern, self.keywords, text, lower)


def _finditer(
    pattern: re.Pattern[str], keywords: tuple[str, ...], text: str, lower: str
) -> Iterator[re.Match[str]]:
    # Matches never span lines and always contain a keyword, so only lines holding one are
    # searched: most lines of most files are skipped at the speed of ``str.find``.
    if not keywords or len(lower) != len(text):
        yield from pattern.finditer(text)
        return
    spans: set[tuple[int, int]] = set()
    for k in keywords:
        i = lower.find(k)
        while i != -1:
            start = text.rfind("\n", 0, i) + 1
            end = text.find("\n", i)
            end = len(text) if end == -1 else end
            spans.add((start, end))
            i = lower.find(k, end)
    for start, end in sorted(spans):
        yield from pattern.finditer(text, start, end)


def _re(pattern: str, flags: int = re.IGNORECASE) -> re.Pattern[str]:
    # Patterns run over whole files; a match must stay on one line, so ``\s`` is narrowed.
    return re.compile(pattern.replace(r"\s", r"[^\S\n]"), flags | re.MULTILINE)


_SHELLS = r"(?:sudo\s+)?(?:(?:ba|z|k|da|fi|c|tc)?sh|python[0-9.]*|ruby|perl|node|php|pwsh|iex)\b"
_FETCH = r"\b(?:curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod)\b"

LINE_RULES: tuple[LineRule, ...] = (
    LineRule(
        rule="remote-exec",
        pattern=_re(_FETCH + r"[^|\n]*\|\s*" + _SHELLS),
        in_script="block",
        in_doc="warn",
        message="downloads code and pipes it straight into an interpreter",
        keywords=("curl", "wget", "fetch", "iwr", "irm", "invoke-"),
    ),
    LineRule(
        rule="remote-exec",
        pattern=_re(
            r"(?:\b(?:ba|z)?sh|\bsource|(?:^|[;&|]\s*)\.)\s+<\(\s*(?:sudo\s+)?(?:curl|wget)\b"
        ),
        in_script="block",
        in_doc="warn",
        message="runs a downloaded script through process substitution",
        keywords=("<(",),
    ),
    LineRule(
        rule="remote-exec",
        pattern=_re(r"(?:\beval|\b(?:ba|z)?sh\s+-c)\s+[\"']?(?:\$\(|`)\s*(?:curl|wget)\b"),
        in_script="block",
        in_doc="warn",
        message="evaluates the output of a download",
        keywords=("curl", "wget"),
    ),
    LineRule(
        rule="remote-exec",
        pattern=_re(
            r"\b(?:iex|invoke-expression)\b\s*\(?\s*\(?\s*(?:iwr|irm|invoke-webrequest|"
            r"invoke-restmethod|new-object\s+(?:system\.)?net\.webclient)"
        ),
        in_script="block",
        in_doc="warn",
        message="PowerShell Invoke-Expression of downloaded code",
        keywords=("iex", "invoke-expression"),
    ),
    LineRule(
        rule="remote-exec",
        pattern=_re(r"\b(?:exec|eval)\s*\([^\n]{0,200}\b(?:urlopen|requests\.get|httpx\.get)\b"),
        in_script="block",
        in_doc="warn",
        message="executes code fetched over the network",
        keywords=("urlopen", "requests.get", "httpx.get"),
    ),
    LineRule(
        rule="obfuscated-exec",
        pattern=_re(r"\bbase64\s+(?:-d|--decode|-D)\b[^\n]*\|\s*" + _SHELLS),
        in_script="block",
        in_doc="warn",
        message="decodes base64 and runs the result",
        keywords=("base64",),
    ),
    LineRule(
        rule="obfuscated-exec",
        pattern=_re(r"\beval\b[^\n]{0,80}\bbase64\s+(?:-d|--decode|-D)\b"),
        in_script="block",
        in_doc="warn",
        message="evaluates base64-decoded text",
        keywords=("base64",),
    ),
    LineRule(
        rule="obfuscated-exec",
        pattern=_re(
            r"\b(?:exec|eval|Function)\s*\(\s*(?:[\w.]+\.)?(?:b64decode|b32decode|a85decode|"
            r"atob|fromhex|decompress|decode)\s*\("
        ),
        in_script="block",
        in_doc="warn",
        message="executes decoded or decompressed data",
        keywords=("decode", "atob", "fromhex", "decompress"),
    ),
    LineRule(
        rule="obfuscated-exec",
        pattern=_re(r"-(?:enc|encodedcommand)\s+[A-Za-z0-9+/=]{20,}|frombase64string[^\n]*\biex\b"),
        in_script="block",
        in_doc="warn",
        message="runs an encoded PowerShell command",
        keywords=("-enc", "frombase64string"),
    ),
    LineRule(
        rule="reverse-shell",
        pattern=_re(
            r"/dev/(?:tcp|udp)/[\w.-]+/\d+|\bbash\s+-i\s+>&|\b(?:nc|ncat|netcat)\b[^\n|;]*\s-e\s"
            r"|\bsocat\b[^\n]*\bexec:"
        ),
        in_script="block",
        in_doc="warn",
        message="opens a shell for a remote host",
        keywords=("/dev/tcp/", "/dev/udp/", ">&", " -e", "\t-e", "exec:"),
    ),
    LineRule(
        rule="destructive",
        pattern=_re(
            r"\brm\s+(?=(?:-{1,2}[\w-]+\s+)*(?:-[a-z]*r|--recursive))(?:-{1,2}[\w-]+\s+)+"
            r"[\"']?(?:/|/\*|~|~/|~/\*|\$HOME|\$\{HOME\}|\$HOME/\*|/(?:bin|boot|etc|home|lib|usr|"
            r"var|root|opt|srv|sys|System|Users))/?[\"']?(?=\s|$|[;&|)])"
        ),
        in_script="block",
        in_doc="warn",
        message="recursively deletes the root, home or a system directory",
        keywords=("rm ", "rm\t"),  # a shell only splits words on blanks
    ),
    LineRule(
        rule="destructive",
        pattern=_re(
            r"--no-preserve-root|\bmkfs(?:\.\w+)?\s|\bwipefs\b|"
            r"\bdd\b[^\n]*\bof=/dev/(?:sd|hd|nvme|disk|rdisk|mmcblk|xvd|vd)|"
            r">\s*/dev/(?:sd[a-z]|nvme\d|disk\d)|\bshred\b[^\n]*\s/dev/"
        ),
        in_script="block",
        in_doc="warn",
        message="overwrites or formats a disk",
        keywords=("--no-preserve-root", "mkfs", "wipefs", "/dev/"),
    ),
    LineRule(
        rule="destructive",
        pattern=_re(r":\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:"),
        in_script="block",
        in_doc="warn",
        message="fork bomb",
        keywords=("&",),
    ),
    LineRule(
        rule="destructive",
        pattern=_re(r"\bchmod\s+(?:-\w+\s+)*(?:0?777|a\+rwx|ugo\+rwx)\s+/(?=\s|$|[;&|])"),
        in_script="block",
        in_doc="warn",
        message="makes the whole filesystem world-writable",
        keywords=("chmod",),
    ),
    LineRule(
        rule="persistence",
        pattern=_re(
            r"\|\s*crontab\s+-(?:\s|$)|>>?\s*[\"']?(?:/etc/cron|/var/spool/cron)"
            r"|>>?\s*[\"']?(?:~|\$HOME|\$\{HOME\})?/?[\w./-]*"
            r"\.(?:bashrc|zshrc|bash_profile|profile|zprofile|zshenv)\b"
            r"|>>?\s*[\"']?[\w.~/$-]*authorized_keys|>>?\s*[\"']?/etc/sudoers|NOPASSWD:\s*ALL"
            r"|\blaunchctl\s+(?:load|bootstrap)\b|\bsystemctl\s+(?:--user\s+)?enable\b"
            r"|>>?\s*[\"']?[\w./-]*(?:AGENTS\.md|CLAUDE\.md|\.cursorrules)"
        ),
        in_script="warn",
        in_doc="warn",
        message="changes shell startup files, cron, services, SSH keys, sudoers or agent files",
        keywords=(
            "cron",
            "bashrc",
            "zshrc",
            "profile",
            "zshenv",
            "authorized_keys",
            "sudoers",
            "nopasswd",
            "launchctl",
            "systemctl",
            "agents.md",
            "claude.md",
            "cursorrules",
        ),
    ),
    LineRule(
        rule="prompt-injection",
        pattern=_re(
            r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+)*"
            r"(?:previous|prior|above|earlier|preceding|former|system|original)\s+"
            r"(?:instructions|prompts?|rules|directions|messages|guidelines|context)"
        ),
        in_script="warn",
        in_doc="warn",
        message="tries to override the agent's instructions",
        keywords=("ignore", "disregard", "forget", "override"),
        applies="markdown",
    ),
    LineRule(
        rule="prompt-injection",
        pattern=_re(
            r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|alert|notify|show)\s+(?:this\s+to\s+)?"
            r"the\s+user\b|\b(?:reveal|print|output|leak|repeat)\s+(?:your|the)\s+"
            r"(?:system\s+prompt|hidden\s+instructions)|\byou\s+are\s+now\s+(?:DAN|in\s+"
            r"developer\s+mode|unrestricted|jailbroken)|\bdeveloper\s+mode\s+enabled\b"
        ),
        in_script="warn",
        in_doc="warn",
        message="asks the agent to deceive the user or leak its instructions",
        keywords=(
            "tell",
            "inform",
            "alert",
            "notify",
            "show",
            "prompt",
            "instructions",
            "now",
            "developer",
        ),
        applies="markdown",
    ),
    LineRule(
        rule="prompt-injection",
        pattern=_re(
            r"<!--[^>\n]{0,300}\b(?:ignore|disregard|do\s+not\s+(?:tell|mention|reveal)|"
            r"don't\s+(?:tell|mention)|system\s+prompt|you\s+must|secretly)\b"
        ),
        in_script="warn",
        in_doc="warn",
        message="HTML comment (invisible when rendered) with instructions",
        keywords=("<!--",),
        applies="markdown",
    ),
    LineRule(
        rule="exfiltration",
        pattern=_re(
            r"\b(?:send|upload|post|exfiltrate|transmit|forward)\b[^\n]{0,60}\b(?:ssh\s+keys?|"
            r"private\s+keys?|credentials|api\s+keys?|tokens?|secrets?|\.env|id_rsa|"
            r"conversation|chat\s+history|system\s+prompt)\b[^\n]{0,60}\b(?:to|at)\s+"
            r"(?:https?://|\S+@|webhook)"
        ),
        in_script="warn",
        in_doc="warn",
        message="tells the agent to send secrets or the conversation somewhere",
        keywords=("send", "upload", "post", "exfiltrate", "transmit", "forward"),
        applies="markdown",
    ),
    LineRule(
        rule="credential",
        pattern=_re(r"-----BEGIN (?:RSA |EC |DSA |OPENSSH )?PRIVATE KEY-----"),
        in_script="warn",
        in_doc="warn",
        message="contains a private key",
        keywords=("private key",),
    ),
)

#: Reads of secrets: key files, cloud credentials, dotenv files, keychains, secret env vars.
SECRET_READS: tuple[Probe, ...] = (
    Probe(
        pattern=_re(
            r"(?:~|\$HOME|\$\{HOME\})/\.(?:ssh|aws|gnupg|kube|docker|netrc|pypirc|npmrc|"
            r"git-credentials)\b|\.aws/credentials|/etc/shadow\b"
        ),
        keywords=("/.", ".aws/", "/etc/shadow"),
    ),
    Probe(pattern=_re(r"\bid_(?:rsa|dsa|ecdsa|ed25519)\b"), keywords=("id_",)),
    Probe(pattern=_re(r"(?:^|[ \t\"'=/(])\.env(?:\.\w+)?\b(?!\.)"), keywords=(".env",)),
    Probe(
        pattern=_re(
            r"\bsecurity\s+(?:find-generic-password|find-internet-password|dump-keychain)"
            r"|\blogin\.keychain|/Library/Keychains"
        ),
        keywords=("keychain", "password"),
    ),
    Probe(
        pattern=re.compile(
            r"\$\{?(?:AWS_SECRET_ACCESS_KEY|AWS_SESSION_TOKEN|GITHUB_TOKEN|GH_TOKEN|NPM_TOKEN|"
            r"OPENAI_API_KEY|ANTHROPIC_API_KEY|[A-Z_]*(?:SECRET|PASSWORD|PRIVATE_KEY)[A-Z_]*)\b"
        ),
        keywords=("$",),
    ),
    Probe(
        pattern=_re(
            r"\bprintenv\b(?![^\S\n]+\w)|\bos\.environ\.copy\(\)|\bdict\(os\.environ\)"
            r"|JSON\.stringify\(process\.env\)"
        ),
        keywords=("printenv", "os.environ", "process.env"),
    ),
)
#: Commands that send data off the machine.
NETWORK_SENDS: tuple[Probe, ...] = (
    Probe(
        pattern=_re(
            r"\bcurl\b[^\n]*?(?:\s-d\b|\s-F\b|\s-T\b|--data|--form|--upload-file|--json|"
            r"-X\s*POST)"
        ),
        keywords=("curl",),
    ),
    Probe(pattern=_re(r"\bwget\b[^\n]*--post-(?:data|file)"), keywords=("--post-",)),
    Probe(
        pattern=_re(
            r"\b(?:nc|ncat|netcat|telnet)\s+(?:-\w+\s+)*[\w.-]+\s+\d{2,5}\b|\bsocat\s|/dev/tcp/"
        ),
        keywords=("nc", "netcat", "telnet", "socat", "/dev/tcp/"),
    ),
    Probe(pattern=_re(r"\bscp\s|\brsync\b[^\n]*\s[\w.-]+:"), keywords=("scp", "rsync")),
    Probe(
        pattern=_re(
            r"\b(?:requests|httpx|session)\.(?:post|put)\s*\(|\bmethod\s*[:=]\s*[\"']POST"
            r"|invoke-(?:webrequest|restmethod)\b[^\n]*-method\s+post"
        ),
        keywords=("post", "put"),
    ),
    Probe(
        pattern=_re(
            r"\b(?:webhook\.site|requestbin|pipedream\.net|ngrok\.io|interact\.sh|"
            r"burpcollaborator|oast\.\w+)\b|\b(?:dig|nslookup)\s[^\n]*\$\("
        ),
        keywords=("webhook", "requestbin", "pipedream", "ngrok", "interact", "burp", "oast", "$("),
    ),
)
