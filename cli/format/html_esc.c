/*
 * html_esc.c - every string from a profile (function names, paths,
 * source lines, the command line) goes onto the page through these two
 * functions.  A C++ template name or a source line holding "<script>"
 * must stay text: in HTML the markup characters become entities; in the
 * JSON inside <script type="application/json"> they become \u escapes,
 * so no string can close the element ("</script>") or, in an old
 * JavaScript parser, end a line (U+2028, U+2029).  Bytes that are not
 * UTF-8 (the model keeps raw bytes as found) become U+FFFD, so the JSON
 * stays valid.
 */
#include "html_int.h"

/* Length of the UTF-8 sequence at s (1-4), 0 when it is not one;
 * *cp gets the code point. */
static int utf8(const unsigned char *s, uint32_t *cp)
{
	int n = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3
	      : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	if (n == 0)
		return 0;
	uint32_t c = n == 1 ? s[0] : s[0] & (0x7f >> n);
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
	if (c < min[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

void html_esc(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	while (*s) {
		uint32_t c;
		int n = utf8(s, &c);
		if (n == 0) {
			fputs("\xef\xbf\xbd", f);
			s++;
			continue;
		}
		if (c == '&')
			fputs("&amp;", f);
		else if (c == '<')
			fputs("&lt;", f);
		else if (c == '>')
			fputs("&gt;", f);
		else if (c == '"')
			fputs("&quot;", f);
		else if (c == '\'')
			fputs("&#39;", f);
		else if (c == 0x2028 || c == 0x2029)
			fprintf(f, "&#x%x;", (unsigned)c);
		else if (c < 0x20 && c != '\t' && c != '\n')
			fputs("\xef\xbf\xbd", f); /* control characters: not text */
		else
			fwrite(s, 1, (size_t)n, f);
		s += n;
	}
}

void json_str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	fputc('"', f);
	while (*s) {
		uint32_t c;
		int n = utf8(s, &c);
		if (n == 0) {
			fputs("\\ufffd", f);
			s++;
			continue;
		}
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", (int)c);
		else if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == '\'' || c == 0x2028 ||
		         c == 0x2029)
			fprintf(f, "\\u%04x", (unsigned)c);
		else
			fwrite(s, 1, (size_t)n, f);
		s += n;
	}
	fputc('"', f);
}
