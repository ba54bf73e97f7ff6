/*
 * image.c - the ELF files symbols come from, one libdwfl session each.
 *
 * Each file is reported to its own Dwfl at bias 0, so a lookup takes the
 * ELF's own addresses (the driver subtracts each mapping's load bias).
 * That lets one open file serve every process that mapped it, whatever
 * address it was loaded at: images are cached by recorded path +
 * build-id for the whole symbolize_profile() call.  What an image keeps
 * across recordings (its units', lines' and DIEs' indexes) is keptset.c's.
 */
#include "symint.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

struct sym_image {
	char *path, *build_id;  /* the key: as recorded */
	Dwfl *dwfl;             /* NULL when no file could be had */
	Dwfl_Module *mod;
	struct sym_scopes *scopes;  /* scopes.c's, per CU */
	struct sym_symtab *symtab;  /* symtab.c's, built on first use */
	struct sym_plt *plt;        /* plt.c's, built on first use */
	struct sym_gopcln *gopcln;  /* gopcln.c's, found on first use */
	struct sym_fdes *fdes;      /* fde.c's, built on first use */
	struct sym_keptset kept;    /* keptset.c's: answers kept across runs */
	int cxx;                    /* symbols named _Z...: 1, 0, -1 not looked */
	struct sym_image *next;
};

struct sym_cache {
	Dwfl_Callbacks callbacks;  /* must outlive every Dwfl */
	char *debuginfo_path;      /* ":.debug:<dirs>:/usr/lib/debug" */
	char **dirs;               /* absolute debug roots, for our own search */
	size_t ndirs;
	int quiet;
	struct sym_image *images;
	/* images by (path, build-id): open addressing, at most half full;
	 * a walk of the list per mapping cost a recording of 2,000
	 * libraries in 100 processes an eighth of its symbolizing */
	struct sym_image **index;
	size_t nimages, index_cap;
	const struct sym_file *files; /* the caller's (sym_options), by build-id */
	size_t nfiles;
};

static size_t image_hash(const char *path, const char *build_id)
{
	size_t h = 14695981039346656037u;
	for (const char *s = path; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	h = (h ^ 0xff) * 1099511628211u; /* between the two */
	for (const char *s = build_id; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

/* The slot of (path, build_id) in c->index: its image's, or the empty
 * one it would take. */
static struct sym_image **image_slot(struct sym_cache *c, const char *path, const char *build_id)
{
	size_t at = image_hash(path, build_id) & (c->index_cap - 1);
	for (struct sym_image *im; (im = c->index[at]) != NULL; at = (at + 1) & (c->index_cap - 1))
		if (strcmp(im->path, path) == 0 && strcmp(im->build_id, build_id) == 0)
			break;
	return &c->index[at];
}

static void index_grow(struct sym_cache *c)
{
	free(c->index);
	c->index_cap = c->index_cap ? 2 * c->index_cap : 64;
	c->index = calloc(c->index_cap, sizeof *c->index);
	if (!c->index)
		sym_oom();
	for (struct sym_image *im = c->images; im; im = im->next)
		*image_slot(c, im->path, im->build_id) = im;
}

static void add_dir(struct sym_cache *c, const char *dir)
{
	char **d = realloc(c->dirs, (c->ndirs + 1) * sizeof *d);
	size_t len = strlen(c->debuginfo_path) + strlen(dir) + 2;
	char *path = malloc(len);
	if (!d || !path)
		sym_oom();
	c->dirs = d;
	c->dirs[c->ndirs++] = sym_strdup(dir);
	snprintf(path, len, "%s:%s", c->debuginfo_path, dir);
	free(c->debuginfo_path);
	c->debuginfo_path = path;
}

struct sym_cache *sym_cache_new(const struct sym_options *opt)
{
	struct sym_cache *c = calloc(1, sizeof *c);
	if (!c)
		sym_oom();
	/* "" = the file's own directory, ".debug" = a subdirectory of it:
	 * where .gnu_debuglink files are looked for, besides the roots. */
	c->debuginfo_path = sym_strdup(":.debug");
	for (const char *const *d = opt ? opt->debug_dirs : NULL; d && *d; d++)
		add_dir(c, *d);
	if (!opt || !opt->no_default_debug_dir)
		add_dir(c, "/usr/lib/debug");
	c->quiet = opt && opt->quiet;
	c->files = opt ? opt->files : NULL;
	c->nfiles = opt && opt->files ? opt->nfiles : 0;
	sym_zcache_use(opt ? opt->debug_cache : NULL, c->dirs, c->ndirs);
	/* The standard callbacks find separate debuginfo by build-id, then
	 * by debuglink, then through debuginfod when DEBUGINFOD_URLS is set;
	 * ours hands libdw a decompressed copy of what they find (zcache.c). */
	c->callbacks.find_elf = dwfl_build_id_find_elf;
	c->callbacks.find_debuginfo = sym_find_debuginfo;
	c->callbacks.section_address = dwfl_offline_section_address;
	c->callbacks.debuginfo_path = &c->debuginfo_path;
	return c;
}

void sym_cache_free(struct sym_cache *c)
{
	if (!c)
		return;
	for (struct sym_image *im = c->images, *next; im; im = next) {
		next = im->next;
		sym_scopes_free(im->scopes);
		sym_symtab_free(im->symtab);
		sym_plt_free(im->plt);
		sym_gopcln_free(im->gopcln);
		sym_fdes_free(im->fdes);
		sym_keptset_free(&im->kept);
		if (im->dwfl && !sym_dwarf_lost()) /* dwoom.c: libdw's state is suspect */
			dwfl_end(im->dwfl);
		free(im->path);
		free(im->build_id);
		free(im);
	}
	free(c->index);
	sym_zcache_use(NULL, NULL, 0); /* its roots are c's */
	for (size_t i = 0; i < c->ndirs; i++)
		free(c->dirs[i]);
	free(c->dirs);
	free(c->debuginfo_path);
	free(c);
}

void sym_cache_leave(struct sym_cache *c)
{
	for (struct sym_image *im = c ? c->images : NULL; im; im = im->next) {
		/* after a failure in libdw (dwoom.c) its state is suspect: what
		 * was built from it is not kept, nor is it ended */
		if (sym_dwarf_lost())
			continue;
		sym_keptset_save(&im->kept);
		/* libdw's own state is ended: its trees of units hold their nodes
		 * by tagged pointers (glibc's tsearch), which memcheck would call
		 * possibly lost at the exit; the kept files' mappings, most of
		 * what closing cost, stay */
		if (im->dwfl)
			dwfl_end(im->dwfl);
		im->dwfl = NULL;
		im->mod = NULL;
	}
	sym_zcache_use(NULL, NULL, 0); /* as sym_cache_free() leaves it */
}

/* The file's build-id in hex into buf, "" when it has none: 0, or -1
 * when it could not be read (out of memory: not a sign that the file
 * changed). */
static int module_build_id(Dwfl_Module *mod, char *buf, size_t size)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &bits, &vaddr);
	buf[0] = '\0';
	if (len > 0 && (size_t)len * 2 < size)
		sym_hex(bits, (size_t)len, buf);
	return len < 0 ? -1 : 0;
}

/*
 * Reports file to a new Dwfl at bias 0 (ET_DYN: base added to p_vaddr;
 * ET_EXEC: already absolute).  1 = open and, when want_id is not "",
 * carrying that build-id; 0 = no such readable ELF file (or one whose
 * build-id could not be read); -1 = readable but another build-id.
 */
static int open_file(struct sym_cache *c, struct sym_image *im, const char *file,
                     const char *want_id)
{
	char id[256];
	Dwfl *dwfl = dwfl_begin(&c->callbacks);
	if (!dwfl)
		return 0;
	dwfl_report_begin(dwfl);
	const char *base = strrchr(im->path, '/');
	Dwfl_Module *mod = dwfl_report_elf(dwfl, base ? base + 1 : im->path, file, -1, 0, true);
	dwfl_report_end(dwfl, NULL, NULL);
	if (!mod) {
		dwfl_end(dwfl);
		return 0;
	}
	if (module_build_id(mod, id, sizeof id) < 0) {
		dwfl_end(dwfl);
		return 0;
	}
	if (want_id[0] && strcasecmp(id, want_id) != 0) {
		dwfl_end(dwfl);
		return -1;
	}
	im->dwfl = dwfl;
	im->mod = mod;
	return 1;
}

/* <root>/.build-id/xx/rest<suffix> for each debug root, the executable
 * (or library) first, then its separate debuginfo: either carries the
 * symbols, and program headers with the right addresses. */
static int open_by_build_id(struct sym_cache *c, struct sym_image *im)
{
	static const char *const suffixes[] = {"", ".debug"};
	const char *id = im->build_id;
	if (strlen(id) < 4)
		return 0;
	for (size_t s = 0; s < 2; s++)
		for (size_t i = 0; i < c->ndirs; i++) {
			char file[4096];
			snprintf(file, sizeof file, "%s/.build-id/%.2s/%s%s", c->dirs[i], id,
			         id + 2, suffixes[s]);
			if (access(file, R_OK) == 0 && open_file(c, im, file, id) == 1)
				return 1;
		}
	return 0;
}

/* A file the caller kept for this build-id (sym_options.files): 1 when
 * one opened with it. */
static int open_kept(struct sym_cache *c, struct sym_image *im)
{
	for (size_t i = 0; i < c->nfiles && im->build_id[0]; i++)
		if (strcasecmp(c->files[i].build_id, im->build_id) == 0 &&
		    open_file(c, im, c->files[i].path, im->build_id) == 1)
			return 1;
	return 0;
}

/* The path without " (deleted)" (prof_path_bare_len()). */
static char *bare_path(const char *path)
{
	char *p = sym_strdup(path);
	p[prof_path_bare_len(p)] = '\0';
	return p;
}

static void open_image(struct sym_cache *c, struct sym_image *im)
{
	if (strcmp(im->path, "[vdso]") == 0) {
		const char *vdso = sym_vdso_path();
		if (vdso && open_file(c, im, vdso, im->build_id) < 0 && !c->quiet)
			fprintf(stderr, "profil: [vdso]: recorded on another kernel "
			        "(build-id %s); its symbols are not shown\n", im->build_id);
		return;
	}
	if (im->path[0] == '[' || im->path[0] == '\0')
		return; /* [heap], [stack], anonymous memory: no file */
	char *file = bare_path(im->path);
	int r = open_file(c, im, file, im->build_id);
	free(file);
	if (r == 1 || open_kept(c, im))
		return;
	if (r < 0 && !c->quiet)
		fprintf(stderr, "profil: %s changed since it was recorded (build-id is not "
		        "%s); looking for that build-id instead\n", im->path, im->build_id);
	if (im->build_id[0] && !open_by_build_id(c, im) && r < 0 && !c->quiet)
		fprintf(stderr, "profil: %s: no file with build-id %s; its addresses "
		        "are shown as offsets\n", im->path, im->build_id);
}

struct sym_image *sym_cache_get(struct sym_cache *c, const char *path, const char *build_id)
{
	struct sym_image **slot = c->index_cap ? image_slot(c, path, build_id) : NULL, *im;
	if (slot && *slot)
		return (*slot)->dwfl ? *slot : NULL;
	im = calloc(1, sizeof *im);
	if (!im)
		sym_oom();
	im->path = sym_strdup(path);
	im->build_id = sym_strdup(build_id);
	im->cxx = -1;
	im->next = c->images;
	c->images = im;
	if (2 * ++c->nimages > c->index_cap)
		index_grow(c); /* im included */
	else
		*slot = im;
	open_image(c, im);
	return im->dwfl ? im : NULL;
}

/* The PT_LOAD that maps file_offset: the kernel maps each segment from
 * its page-aligned offset, so a mapping starts at a segment's aligned
 * offset (preferred), or inside one when the kernel split it. */
int sym_image_bias(struct sym_image *im, uint64_t start, uint64_t file_offset, uint64_t *bias)
{
	GElf_Addr b;
	Elf *elf = dwfl_module_getelf(im->mod, &b);
	size_t n;
	if (!elf || elf_getphdrnum(elf, &n) != 0)
		return -1;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	int found = 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		uint64_t first = ph.p_offset & ~(page - 1);
		if (file_offset == 0 && first == 0) {
			/* the ELF header's page: right even in a separate
			 * debuginfo file, whose other segments lost their
			 * file offsets (p_filesz 0) */
			*bias = start - (ph.p_vaddr & ~(page - 1));
			return 0;
		}
		if (file_offset < first || file_offset >= ph.p_offset + ph.p_filesz)
			continue;
		int exact = first == file_offset;
		if (found && !exact)
			continue;
		/* the byte at file_offset sits at p_vaddr + (file_offset - p_offset) */
		*bias = start - (ph.p_vaddr + (file_offset - ph.p_offset));
		found = 1;
		if (exact)
			break;
	}
	return found ? 0 : -1;
}

Dwfl_Module *sym_image_module(struct sym_image *im)
{
	return im->mod;
}

const char *sym_image_path(const struct sym_image *im)
{
	return im->path;
}

int sym_image_has_cxx_symbols(struct sym_image *im)
{
	if (im->cxx < 0) {
		int n = dwfl_module_getsymtab(im->mod);
		im->cxx = 0;
		for (int i = 0; i < n && !im->cxx; i++) {
			GElf_Sym sym;
			GElf_Addr addr;
			const char *name = dwfl_module_getsym_info(im->mod, i, &sym, &addr, NULL,
			                                           NULL, NULL);
			im->cxx = name && strncmp(name, "_Z", 2) == 0;
		}
	}
	return im->cxx;
}

struct sym_symtab **sym_image_symtab(struct sym_image *im)
{
	return &im->symtab;
}

struct sym_plt **sym_image_plt(struct sym_image *im)
{
	return &im->plt;
}

struct sym_gopcln **sym_image_gopcln(struct sym_image *im)
{
	return &im->gopcln;
}

struct sym_fdes **sym_image_fdes(struct sym_image *im)
{
	return &im->fdes;
}

struct sym_scopes **sym_image_scopes(struct sym_image *im)
{
	return &im->scopes;
}

struct sym_keptset *sym_image_keptset(struct sym_image *im)
{
	return &im->kept;
}
