#!/usr/bin/env bash
# rpt-translate end to end: output shape for n-best and scores, throughput report, and clear
# non-zero exits on a bad model directory or option. Usage: cli_test.sh RPT_TRANSLATE MODEL_DIR
set -uo pipefail
translate=$1
model=$2
source "$(dirname "${BASH_SOURCE[0]}")/../support/check.sh"

printf 'Open the file\nSave %%s as\nQuit\n' > "$work/in.txt"

"$translate" --model "$model" --beam-size 4 < "$work/in.txt" > "$work/out.txt" 2> "$work/err.txt"
check "exit 0 on a good run" test $? -eq 0
check "one line per input" test "$(wc -l < "$work/out.txt")" -eq 3

"$translate" --model "$model" --beam-size 4 --n-best 3 --with-scores < "$work/in.txt" > "$work/nbest.txt"
check "exit 0 with --n-best and --with-scores" test $? -eq 0
check "n-best 3 gives three lines per input" test "$(wc -l < "$work/nbest.txt")" -eq 9
check "scores are tab-prefixed" awk -F'\t' 'NF < 2 || $1 !~ /^-?[0-9.]+$/ {exit 1}' "$work/nbest.txt"
check "n-best scores descend per input" awk -F'\t' \
  '{ if (NR % 3 != 1 && $1 > prev + 1e-6) exit 1; prev = $1 }' "$work/nbest.txt"
check "first n-best equals the 1-best" \
  diff <(awk 'NR % 3 == 1' "$work/nbest.txt" | cut -f2-) "$work/out.txt"

"$translate" --model "$model" --verbose < "$work/in.txt" > /dev/null 2> "$work/verbose.txt"
check "exit 0 with --verbose" test $? -eq 0
check "verbose reports throughput" grep -q "sentences/s" "$work/verbose.txt"
check "verbose names the CPU kernels" grep -q "CPU kernels: cpu: .*; float32: blis-.*; int8: onednn-" \
  "$work/verbose.txt"

# BLIS's own guesses for unknown CPUs (generic: SIGFPE once) and AVX-512 Xeons (skx) are ignored.
for arch in 25 0; do
  BLIS_ARCH_TYPE=$arch "$translate" --model "$model" --beam-size 4 < "$work/in.txt" \
    > "$work/arch.txt" 2> "$work/arch_err.txt"
  check "BLIS_ARCH_TYPE=$arch translates" test $? -eq 0
  check "BLIS_ARCH_TYPE=$arch gives the same translations" diff "$work/arch.txt" "$work/out.txt"
done

# A refusal is a clean exit with an error status, not a crash (128 + signal).
refused() { test "$1" -ge 1 && test "$1" -lt 128; }

"$translate" --model "$work/missing-model" < "$work/in.txt" > /dev/null 2> "$work/bad.txt"
check "missing model exits with an error status" refused $?
check "missing model message names the directory" grep -q "missing-model" "$work/bad.txt"

RPT_BLIS_CONFIG=pentium "$translate" --model "$model" < "$work/in.txt" > /dev/null 2> "$work/bad.txt"
check "an unknown RPT_BLIS_CONFIG is refused" refused $?
check "the refusal lists the configurations" grep -q "haswell, zen3" "$work/bad.txt"
RPT_BLIS_CONFIG=generic RPT_FLOAT32_GEMM=sup "$translate" --model "$model" < "$work/in.txt" \
  > /dev/null 2> "$work/bad.txt"
check "sup where the configuration has none is refused" refused $?
check "the refusal says why" grep -q "no float32 sup kernels" "$work/bad.txt"

"$translate" --model "$model" --beam-size 0 < "$work/in.txt" > /dev/null 2> "$work/bad.txt"
check "beam size 0 is refused" refused $?
"$translate" --model "$model" --beam-size 2 --n-best 3 < "$work/in.txt" > /dev/null 2> "$work/bad.txt"
check "n-best above beam size is refused" refused $?
check "refusal names the option" grep -q "n_best" "$work/bad.txt"

"$translate" --model "$model" --compute-type int8 < "$work/in.txt" > "$work/int8.txt" 2> "$work/bad.txt"
check "int8 on the CPU translates" test $? -eq 0
check "int8: one line per input" test "$(wc -l < "$work/int8.txt")" -eq 3
"$translate" --model "$model" --device cuda --compute-type int8 < "$work/in.txt" > /dev/null \
  2> "$work/bad.txt"
check "int8 on cuda is refused" refused $?
check "the int8 refusal names the compute type" grep -q "compute-type int8" "$work/bad.txt"
"$translate" --model "$model" --compute-type float16 < "$work/in.txt" > /dev/null 2> "$work/bad.txt"
check "float16 on the CPU is refused" refused $?

# Several decoders on their own threads: the same lines in the same order; a blank line comes
# back as it was, in its place.
for i in $(seq 1 40); do echo "Save the file number $i as %s"; done > "$work/many.txt"
"$translate" --model "$model" --threads 1 < "$work/many.txt" > "$work/one.txt"
"$translate" --model "$model" --threads 1 --inter-threads 3 --batch-size 4 --verbose \
  < "$work/many.txt" > "$work/three.txt" 2> "$work/three.err"
check "--inter-threads 3 exits 0" test $? -eq 0
check "--inter-threads 3 gives the same output" diff "$work/one.txt" "$work/three.txt"
check "--verbose counts the decoders" grep -q "3 decoders" "$work/three.err"
{ head -25 "$work/many.txt"; echo "   "; tail -15 "$work/many.txt"; } > "$work/gap.txt"
"$translate" --model "$model" --threads 1 --inter-threads 2 --batch-size 4 < "$work/gap.txt" \
  > "$work/gap.out" 2> "$work/bad.txt"
check "a blank line does not stop --inter-threads 2" test $? -eq 0
check "a blank line stays in its place, as it was" \
  diff "$work/gap.out" <({ head -25 "$work/one.txt"; echo "   "; tail -15 "$work/one.txt"; })

# Lines are cut into sentences and put back into their layout: a line of three sentences gives
# what the three give alone, between the original spaces; indentation, list markers, a symbol at
# the end and CRLF come back as they were.
printf '  Open the file.   Save %%s as.\tQuit! \xe2\x9c\x93\r\n\n- Quit\n' > "$work/para.txt"
printf 'Open the file.\nSave %%s as.\nQuit!\nQuit\n' > "$work/para_alone.txt"
"$translate" --model "$model" --threads 1 < "$work/para_alone.txt" > "$work/para_alone.out"
mapfile -t each < "$work/para_alone.out"
"$translate" --model "$model" --threads 1 --inter-threads 2 --batch-size 2 < "$work/para.txt" \
  > "$work/para.out"
check "a paragraph line exits 0" test $? -eq 0
check "a paragraph is its sentences translated alone, in its layout" diff "$work/para.out" \
  <(printf '  %s   %s\t%s \xe2\x9c\x93\r\n\n- %s\n' "${each[0]}" "${each[1]}" "${each[2]}" "${each[3]}")
"$translate" --model "$model" --threads 1 --split-sentences none < "$work/para.txt" \
  > "$work/none.out"
check "--split-sentences none keeps the layout around the whole line" \
  test "$(head -c 2 "$work/none.out")" = "  " -a "$(head -1 "$work/none.out" | tail -c 6 | od -An -tx1 | tr -d ' \n')" = "20e29c930d0a" \
  -a "$(sed -n 2p "$work/none.out")" = "" -a "$(sed -n 3p "$work/none.out" | head -c 2)" = "- "
"$translate" --model "$model" --split-sentences bogus < "$work/in.txt" > /dev/null 2> "$work/bad.txt"
check "an unknown --split-sentences is refused" refused $?
"$translate" --model "$model" --inter-threads 0 < "$work/in.txt" > /dev/null 2> "$work/bad.txt"
check "--inter-threads 0 is refused" refused $?

# --format html|xml: all of stdin one document, its markup kept (tests/support/markup_structure.py
# compares tags, attributes and untouched content); a fragment comes back as a fragment.
structure() { python3 "$(dirname "${BASH_SOURCE[0]}")/../support/markup_structure.py" "$@"; }
cat > "$work/page.html" <<'HTML'
<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Open the file</title></head>
<body>
<h1 title="The main title">Save the file</h1>
<p>Click <b>the <i>big</i> button</b> &amp; <a href="x.html" title="Open the file">quit</a>.</p>
<script>if (a < b && c) { say("</b> Open the file"); }</script>
<p translate="no">Brand Name Stays</p>
<ul><li>Open the file</li><li><img src="a.png" alt="Save the file"> Quit</li></ul>
</body>
</html>
HTML
"$translate" --model "$model" --format html --verbose < "$work/page.html" > "$work/page.out" \
  2> "$work/page.err"
check "--format html exits 0" test $? -eq 0
check "--format html keeps the tag structure" structure html "$work/page.html" "$work/page.out"
check "--format html keeps the script byte for byte" \
  grep -qF 'if (a < b && c) { say("</b> Open the file"); }' "$work/page.out"
check "--format html keeps translate=no content" grep -qF '>Brand Name Stays</p>' "$work/page.out"
target=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["target_language"])' \
  "$model/config.json")
check "--format html declares the translation's language" \
  grep -qF "<html lang=\"$target\">" "$work/page.out"
check "--format html translates the text" test "$(grep -c 'Save the file' "$work/page.out")" -eq 0
check "--verbose reports units, segments, units kept as source and time" \
  grep -q "text units, .* segments, .* units kept as source.*time" <(tr '\n' ' ' < "$work/page.err")

printf '  Open <b>the file</b>. Quit!\n' > "$work/fragment.html"
"$translate" --model "$model" --format html < "$work/fragment.html" > "$work/fragment.out"
check "an HTML fragment exits 0" test $? -eq 0
check "an HTML fragment comes back a fragment" \
  test "$(grep -ciE '<(html|body|p)[ >]' "$work/fragment.out")" -eq 0
check "an HTML fragment keeps its tags" structure html "$work/fragment.html" "$work/fragment.out"
check "an HTML fragment keeps its edges" \
  test "$(head -c 2 "$work/fragment.out")" = "  " -a "$(tail -c 2 "$work/fragment.out" | od -An -c | tr -d ' ')" != '\n\n' \
  -a "$(tail -c 1 "$work/fragment.out" | od -An -c | tr -d ' ')" = '\n'
printf 'Tom &amp; Jerry' | "$translate" --model "$model" --format html > "$work/entities.out"
check "a fragment of text adds no newline and keeps its entity escaped" \
  test "$(tail -c 1 "$work/entities.out" | od -An -c | tr -d ' ')" != '\n' -a "$(grep -c '&amp;' "$work/entities.out")" -eq 1

cat > "$work/doc.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<!-- catalogue -->
<catalog>
  <item id="1"><name>Open the file</name>
    <description>A <em>small</em> widget &amp; <link ref="home">your home</link>.</description>
  </item>
  <note translate="no">Internal note</note>
  <code><![CDATA[if (a < b) { keep(); }]]></code>
</catalog>
XML
"$translate" --model "$model" --format xml < "$work/doc.xml" > "$work/doc.out"
check "--format xml exits 0" test $? -eq 0
check "--format xml is well-formed with the same structure" \
  structure xml "$work/doc.xml" "$work/doc.out"
check "--format xml keeps the declaration" grep -q '^<?xml version="1.0" encoding="UTF-8"?>' \
  "$work/doc.out"
printf '<item>Open the file</item>\n<item>Quit</item>' > "$work/fragment.xml"
"$translate" --model "$model" --format xml < "$work/fragment.xml" > "$work/fragment_xml.out"
check "an XML fragment of siblings exits 0" test $? -eq 0
check "an XML fragment keeps its structure" \
  structure xml "$work/fragment.xml" "$work/fragment_xml.out"
printf '<p>Open the file</p><note>Open the file</note>' |
  "$translate" --model "$model" --format html --ignore-tags note,aside > "$work/ignored.out"
check "--ignore-tags leaves the element untouched" grep -qF '<note>Open the file</note>' \
  "$work/ignored.out"

printf '<doc>\n<a>\n<b>text</c>\n</doc>\n' |
  "$translate" --model "$model" --format xml > "$work/bad.out" 2> "$work/bad.txt"
check "malformed XML exits 1" test $? -eq 1
check "malformed XML names the line" grep -q "not well-formed: line 3: .*mismatch" "$work/bad.txt"
check "malformed XML writes nothing" test ! -s "$work/bad.out"
for refused_option in "--n-best 2 --beam-size 2" "--with-scores" "--format bogus"; do
  # shellcheck disable=SC2086  # the options are words
  "$translate" --model "$model" --format html $refused_option < "$work/fragment.html" \
    > /dev/null 2> "$work/bad.txt"
  check "--format html refuses $refused_option" refused $?
done
check "the n-best refusal says why" grep -q "needs --format text" <(
  "$translate" --model "$model" --format xml --n-best 2 --beam-size 2 < /dev/null 2>&1)

# --format po: a catalogue filled in, valid for gettext's msgfmt --check (docs/localization.md).
catalog="$(dirname "$0")/../fixtures/catalogs/app.po"
"$translate" --model "$model" --format po --input "$catalog" --output "$work/de.po" --verbose \
  2> "$work/po.txt"
check "--format po exits 0" test $? -eq 0
check "--format po passes msgfmt --check" msgfmt --check -o /dev/null "$work/de.po"
check "--format po fills both plural forms" grep -qzP 'msgstr\[0\] "[^"]+"\nmsgstr\[1\] "[^"]+"' \
  "$work/de.po"
check "--format po counts the entries" grep -q "12 entries: 10 translated now" "$work/po.txt"
"$translate" --model "$model" --format po --no-fuzzy < "$catalog" > "$work/de_stdin.po"
check "--format po reads stdin, writes stdout" \
  grep -q "^11 translated messages, 1 fuzzy" <(msgfmt --statistics -o /dev/null "$work/de_stdin.po" 2>&1)
printf 'msgid "a"\nmsgstr ""\nmsgid "unterminated\n' |
  "$translate" --model "$model" --format po > "$work/bad.out" 2> "$work/bad.txt"
check "a broken catalogue exits 1" test $? -eq 1
check "a broken catalogue names gettext's line" grep -q "PO: line 4: end-of-line within string" \
  "$work/bad.txt"
"$translate" --model "$model" --format xliff -i "$(dirname "$0")/../fixtures/catalogs/app-2.0.xlf" \
  > "$work/de.xlf"
check "--format xliff exits 0" test $? -eq 0
check "--format xliff is well-formed" xmllint --noout --nonet "$work/de.xlf"
check "--format xliff adds targets" test "$(grep -c '<target' "$work/de.xlf")" -gt \
  "$(grep -c '<target' "$(dirname "$0")/../fixtures/catalogs/app-2.0.xlf")"
# --format json: an i18next/FormatJS resource file in the target language, keys and layout kept.
printf '{\n  "title": "Open file",\n  "files": {\n    "defaultMessage": "{n, plural, one {# file} other {# files}}",\n    "description": "Files"\n  }\n}\n' \
  > "$work/en.json"
"$translate" --model "$model" --format json -i "$work/en.json" -o "$work/de.json"
check "--format json exits 0" test $? -eq 0
check "--format json keeps the file's layout" diff <(sed 's/"[^"]*"$/""/; s/": "[^"]*"/": ""/' "$work/en.json") \
  <(sed 's/"[^"]*"$/""/; s/": "[^"]*"/": ""/' "$work/de.json")
check "--format json translates the texts" python3 -c '
import json, re, sys
de = json.load(open(sys.argv[1]))
assert de["title"] != "Open file" and de["files"]["description"] == "Files", de
case = r"[^{}#]*#[^{}#]*"  # each case translated, its # kept once
assert re.fullmatch(r"\{n, plural, one \{%s\} other \{%s\}\}" % (case, case),
                    de["files"]["defaultMessage"]), de
assert "file" not in de["files"]["defaultMessage"], de' "$work/de.json"
printf '{"a": "x",}' | "$translate" --model "$model" --format json > /dev/null 2> "$work/bad.txt"
check "a broken JSON file exits 1 naming its column" grep -q "JSON: parse error at line 1, column 11" \
  "$work/bad.txt"
"$translate" --model "$model" --output "$work/x" < /dev/null 2> "$work/bad.txt"
check "--output needs a whole-file format" refused $?

exit $failures
