"""Reading the CLI's text the way a user does: `ragmeter runs` columns, `--help` sections, a usage error."""


def listed_runs(text):
    """`ragmeter runs` output as dicts, each column cut where its header word starts."""
    header, *rows = text.splitlines()
    names = header.split()
    starts = [header.index(f"{n} ") if i + 1 < len(names) else header.index(n) for i, n in enumerate(names)]
    bounds = list(zip(starts, starts[1:] + [None]))
    return [{n: row[a:b].strip() for n, (a, b) in zip(names, bounds)} for row in rows]


def help_sections(text):
    """{section title: [its options' first flag]} from argparse's help text."""
    sections, title = {}, None
    for line in text.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            title = line[:-1]
            sections[title] = []
        elif title and line.startswith("  ") and not line.startswith("   "):
            first = line.split()[0].rstrip(",")
            if first.startswith("-") or title == "data":
                sections[title].append(first)
    return sections


def usage_error(capsys, argv):
    """`ragmeter ARGV` mistyped: it exits 2 with one line on stderr and no traceback; that line."""
    from evaluator.cli.command import main

    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err
