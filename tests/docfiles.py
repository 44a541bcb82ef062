"""Document files for the `ragmeter generate` tests, written by the test: a corpus folder and PDFs.

`make_pdf(pages)` writes a real PDF by hand (catalog, pages, Helvetica text, a correct xref
table), one page per list of lines, so pypdf reads it the way it reads any PDF.
"""
from __future__ import annotations

from pathlib import Path
from typing import List, Sequence

BIKES_MD = """# Electric bikes

## Pricing

Electric bikes cost 20 cents extra per minute on top of the normal fare. The battery range is about 60 kilometres.

## Charging

Riders never charge the bikes themselves. Our crew swaps batteries every night between 1 am and 5 am.
"""

PASSES_TXT = """Day passes

A day pass costs 9 euros and is valid for 24 hours from the first unlock. Every ride up to 45 minutes is included.

Longer rides cost 1 euro for each extra 30 minutes. The pass can be bought in the app or at any station kiosk.
"""

LOST_HTML = """<html><head><title>x</title><style>p {color: red}</style><script>alert(1)</script></head>
<body><h1>Lost property</h1><p>Items left on a bike are kept for 30 days at the central depot.</p>
<h2>Claiming</h2><p>Bring an ID card and describe the item; claims open on weekdays from 9 to 17.</p></body></html>
"""

PDF_PAGES = [["Helmet rules", "Children under 14 must wear a helmet on every ride."],
             ["Helmets can be borrowed for free at 12 central stations."]]


def _escape(line: str) -> str:
    return line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: Sequence[Sequence[str]]) -> bytes:
    """A minimal valid PDF with one page per item of `pages`, each line drawn as text."""
    objects: List[bytes] = []
    n_pages = len(pages)
    font_id = 3 + 2 * n_pages
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(n_pages))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n_pages} >>".encode())
    for i, lines in enumerate(pages):
        page_id, content_id = 3 + 2 * i, 4 + 2 * i
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_id} 0 R "
                       f"/Resources << /Font << /F1 {font_id} 0 R >> >> >>".encode())
        text = "BT /F1 12 Tf 72 720 Td 16 TL " + " ".join(f"({_escape(l)}) Tj T*" for l in lines) + " ET"
        stream = text.encode("latin-1")
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        assert page_id == len(objects) - 1
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def write_corpus(folder: Path) -> Path:
    """Four documents of four formats: Markdown, text, HTML, PDF."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bikes.md").write_text(BIKES_MD, encoding="utf-8")
    (folder / "passes.txt").write_text(PASSES_TXT, encoding="utf-8")
    (folder / "lost.html").write_text(LOST_HTML, encoding="utf-8")
    (folder / "helmets.pdf").write_bytes(make_pdf(PDF_PAGES))
    return folder


def big_corpus(folder: Path, documents: int = 30, sections: int = 3) -> Path:
    """`documents` Markdown files of `sections` sections each, with distinct facts (bench and spread tests)."""
    folder.mkdir(parents=True, exist_ok=True)
    topics = ["refunds", "deliveries", "accounts", "invoices", "returns", "warranty", "shipping", "coupons",
              "loyalty", "privacy", "security", "payments", "gift cards", "repairs", "rentals", "memberships",
              "parking", "tickets", "insurance", "support", "events", "catering", "storage", "cleaning",
              "training", "licences", "uploads", "exports", "backups", "alerts"]
    nouns = ["invoice", "courier", "password", "voucher", "receipt", "parcel", "ticket", "badge", "locker",
             "helmet", "charger", "battery", "contract", "deposit", "manual", "sticker", "cable", "router",
             "printer", "scanner", "tablet", "laptop", "monitor", "keyboard", "speaker", "camera", "lamp",
             "kettle", "bicycle", "scooter", "trailer", "pallet", "crate", "drawer", "folder", "stamp", "poster"]
    verbs = ["approved", "archived", "inspected", "refunded", "replaced", "shredded", "scanned", "collected",
             "renewed", "repaired", "weighed", "labelled", "escalated", "audited", "sealed", "signed", "tested"]
    for d in range(documents):
        topic = topics[d % len(topics)] + ("" if d < len(topics) else f" {d}")
        parts = [f"# {topic.title()} policy\n"]
        for s in range(sections):
            parts.append(f"## {topic.title()} rule {s + 1}\n")
            k = d * sections + s
            noun, other, verb = nouns[k % len(nouns)], nouns[(k * 5 + 3) % len(nouns)], verbs[k % len(verbs)]
            parts.append(f"Every {noun} sent about {topic} is {verb} within {d + s + 2} days by the "
                         f"{['north', 'south', 'east', 'west'][s % 4]} office. A {other} is kept for "
                         f"{(d * 7 + s) % 90 + 10} months after it is {verbs[(k + 7) % len(verbs)]}.\n")
        (folder / f"doc{d:02d}.md").write_text("\n".join(parts), encoding="utf-8")
    return folder
