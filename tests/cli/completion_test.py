#!/usr/bin/env python3
"""completion_test.py ETT: `ett completion bash|zsh|fish` completes verbs, subverbs, options and option values in
the real shells (Debian's bash, zsh and fish): a choice option offers its choices, --db offers sqlite: files,
a file option offers files, a number option offers nothing. Exit 0 when every case completes as expected."""
import os
import subprocess
import sys
import tempfile

ETT = os.path.abspath(sys.argv[1])
ENV = dict(os.environ, PATH=os.path.dirname(ETT) + os.pathsep + os.environ.get("PATH", ""))

# (words before the cursor and the word being completed, what must be offered, what must not be)
CASES = [
    (["ls", "--format", ""], {"text", "csv", "json", "jsonl"}, {"trace.img"}),
    (["analyze", "d"], {"durations"}, {"precision"}),
    (["analyze", "durations", "--pair", ""], {"same-code", "fifo"}, set()),
    (["export", "--format", "p"], {"perfetto", "perfetto-proto"}, {"vcd"}),
    (["load", "--db", "sqlite:tr"], {"sqlite:traces.db", "sqlite:trace.img"}, {"sqlite:notes.txt"}),
    (["extract", "tr"], {"trace.img", "traces.db"}, {"notes.txt"}),
    (["extract", "-o", "no"], {"notes.txt"}, set()),
    (["synth", "x.img", "--events", ""], set(), {"trace.img"}),
    (["qemu", ""], {"run"}, set()),
    (["qemu", "run", "--disk-interface", ""], {"ide", "ahci", "nvme"}, set()),
    (["completion", ""], {"bash", "zsh", "fish"}, set()),
]


def prefix_filter(words, current):
    return {w for w in words if w.startswith(current)}


def bash_offers(words):
    script = ('source <(ett completion bash)\n'
              'COMP_WORDS=(ett "$@"); COMP_CWORD=$#; COMPREPLY=(); _ett; printf "%s\\n" "${COMPREPLY[@]}"\n')
    out = subprocess.run(["bash", "-c", script, "bash"] + words, env=ENV, capture_output=True, text=True, check=True)
    return set(filter(None, out.stdout.split("\n")))


def zsh_offers(words):
    # Through zsh's own bashcompinit, as an interactive zsh runs it; zsh's compadd then filters by the prefix.
    script = ('autoload -U compinit && compinit -u -d "$PWD/.zcompdump"\n'
              'source <(ett completion zsh)\n'
              '[[ $_comps[ett] == _bash_complete* ]] || { print "ett is not registered"; exit 3 }\n'
              'emulate sh; COMP_WORDS=(ett "$@"); COMP_CWORD=$#; COMPREPLY=(); _ett\n'
              'printf "%s\\n" "${COMPREPLY[@]}"\n')
    out = subprocess.run(["zsh", "-f", "-c", script, "zsh"] + words, env=ENV, capture_output=True, text=True,
                         check=True)
    return prefix_filter(set(filter(None, out.stdout.split("\n"))), words[-1])


def fish_offers(words):
    line = "ett " + " ".join(words)
    out = subprocess.run(["fish", "--no-config", "-c", f"ett completion fish | source; complete -C {fish_quote(line)}"],
                         env=ENV, capture_output=True, text=True, check=True)
    return {entry.split("\t")[0] for entry in out.stdout.split("\n") if entry}


def fish_quote(text):
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def main():
    failures = 0
    with tempfile.TemporaryDirectory() as work:
        os.chdir(work)
        for name in ("trace.img", "traces.db", "notes.txt"):
            open(name, "w").close()
        for shell, offers in (("bash", bash_offers), ("zsh", zsh_offers), ("fish", fish_offers)):
            for words, wanted, unwanted in CASES:
                got = offers(words)
                missing, extra = wanted - got, unwanted & got
                if missing or extra:
                    failures += 1
                    print(f"{shell}: ett {' '.join(words)}<TAB>: offered {sorted(got)}; missing {sorted(missing)}, "
                          f"should not offer {sorted(extra)}")
    print(f"completion: {len(CASES)} cases in bash, zsh and fish, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
