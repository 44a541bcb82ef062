"""Issue 42, untried until the spreadsheet reader landed (io/workbooks.py): .xlsx zip bombs uploaded as the
dashboard uploads them (service.preview_upload with the server's byte limit). Each is refused with what
to do, quickly, holding little memory; a workbook of 100,000 empty members is read."""
import io
import struct
import tracemalloc
import zipfile

import pytest

from evaluator import service
from evaluator.errors import RagmeterError

LIMIT = 200 << 20  # the dashboard's default upload cap

CT = b'<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>'
RELS = b'<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>'
WB = b'<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>'
WBRELS = b'<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>'

def sheet(rows_xml):
    return b'<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>' + rows_xml + b'</sheetData></worksheet>'

def book(sheet_xml, extra=()):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        parts = [("[Content_Types].xml", CT), ("_rels/.rels", RELS), ("xl/workbook.xml", WB),
                 ("xl/_rels/workbook.xml.rels", WBRELS), ("xl/worksheets/sheet1.xml", sheet_xml), *extra]
        for name, data in parts:
            z.writestr(name, data)
    return buf.getvalue()

head = b'<row r="1"><c t="inlineStr"><is><t>question</t></is></c><c t="inlineStr"><is><t>answer</t></is></c></row>'
cell_row = b'<row><c t="inlineStr"><is><t>q</t></is></c><c t="inlineStr"><is><t>a</t></is></c></row>'

def lie(data, member="xl/worksheets/sheet1.xml", size=1000):
    """The workbook with `member`'s declared unpacked size rewritten (local header and central directory)."""
    b = bytearray(data)
    name = member.encode()
    i = 0
    while True:
        i = b.find(name, i)
        if i < 0: break
        if b[i - 30:i - 26] == b"PK\x03\x04":
            struct.pack_into("<I", b, i - 30 + 22, size)
        if b[i - 46:i - 42] == b"PK\x01\x02":
            struct.pack_into("<I", b, i - 46 + 24, size)
        i += 1
    return bytes(b)



def preview(data):
    tracemalloc.start()
    try:
        return service.preview_upload(data, "bomb.xlsx", LIMIT)
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 64 << 20, f"{peak / 1e6:.0f} MB held while reading"


@pytest.mark.parametrize("make, message", [
    (lambda: book(sheet(head + cell_row * (300_000_000 // len(cell_row)))), "it may be a zip bomb"),
    (lambda: lie(book(sheet(head + cell_row * (50_000_000 // len(cell_row))))), "not a readable Excel workbook"),
    (lambda: book(b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">' + b"".join(
        b'<!ENTITY %s "%s">' % (b"a" * (i + 1), (b"&" + b"a" * i + b";") * 10) for i in range(1, 9))
        + b']><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>' + head
        + b'<row><c t="inlineStr"><is><t>&aaaaaaaaa;</t></is></c></row></sheetData></worksheet>'), "damaged"),
], ids=["declared 300 MB", "directory lies", "billion laughs"])
def test_a_workbook_bomb_is_refused_with_what_to_do(make, message):
    data = make()
    assert len(data) < 4 << 20
    with pytest.raises(RagmeterError, match=message):
        preview(data)


def test_a_workbook_of_a_hundred_thousand_empty_members_is_read():
    found = preview(book(sheet(head + cell_row), [(f"x/{i}.xml", b"") for i in range(100_000)]))
    assert found.row_count == 1
