// SPDX-License-Identifier: GPL-2.0
/*
 * mkzonefs: a small zonefs formatter for the tests (Debian ships no zonefs-tools).
 *
 *   mkzonefs [-f FEATURES] [-L LABEL] [-U UUID] [-n] [-C crc|magic|reserved] [-q] DEVICE
 *
 * Writes the zonefs super block (the layout of struct zonefs_super in
 * fs/zonefs/zonefs.h) at sector 0 of a zoned block device, the way the kernel's
 * zonefs_read_super() reads it: magic, then a CRC32 over the whole 4 KiB block
 * computed with the s_crc field zeroed (crc32_le seeded with ~0, no final
 * inversion), features, uid/gid/perm, label, uuid and a reserved area of zeroes.
 *
 * Zone 0 holds the super block and is never a file. If it is conventional, the
 * block is simply written. If it is sequential (zone_nr_conv=0 on null_blk), the
 * zone is reset, the block written at its start with a direct write, and the zone
 * finished, so that it is full and holds no open or active zone resource (what
 * the kernel documentation says mkzonefs does). Every other sequential zone that
 * is not empty is reset (-n leaves them as they are), so a freshly formatted
 * device has empty files.
 *
 * -f takes a comma separated list: aggr_cnv, uid=N, gid=N, perm=OCTAL, or a raw
 * number (0x...) ORed into s_features as is (to test the kernel's refusal of
 * unknown feature bits). -o is the same as -f (zonefs-tools spells it -o).
 * -C writes a deliberately broken super block for the tests: a wrong CRC, a wrong
 * magic, or a non-zero reserved area with a CRC that covers it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <endian.h>
#include <linux/blkzoned.h>
#include <linux/fs.h>
#include <linux/magic.h>

#define ZONEFS_LABEL_LEN	64
#define ZONEFS_UUID_SIZE	16
#define ZONEFS_SUPER_SIZE	4096

#define ZONEFS_F_AGGRCNV	(1ULL << 0)
#define ZONEFS_F_UID		(1ULL << 1)
#define ZONEFS_F_GID		(1ULL << 2)
#define ZONEFS_F_PERM		(1ULL << 3)

struct zonefs_super {
	uint32_t	s_magic;
	uint32_t	s_crc;
	char		s_label[ZONEFS_LABEL_LEN];
	uint8_t		s_uuid[ZONEFS_UUID_SIZE];
	uint64_t	s_features;
	uint32_t	s_uid;
	uint32_t	s_gid;
	uint32_t	s_perm;
	uint8_t		s_reserved[3988];
} __attribute__((packed));

_Static_assert(sizeof(struct zonefs_super) == ZONEFS_SUPER_SIZE,
	       "struct zonefs_super must be 4096 bytes");

static int quiet;

#define msg(...) do { if (!quiet) printf(__VA_ARGS__); } while (0)

static void die(const char *what)
{
	fprintf(stderr, "mkzonefs: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: mkzonefs [-f aggr_cnv,uid=N,gid=N,perm=OCT|0xBITS] [-L label]\n"
		"                [-U uuid] [-n] [-C crc|magic|reserved] [-q] DEVICE\n");
	exit(2);
}

/* The kernel's crc32(~0U, buf, len): reflected polynomial 0xedb88320, no final xor. */
static uint32_t crc32_le(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	int i;

	while (len--) {
		crc ^= *p++;
		for (i = 0; i < 8; i++)
			crc = (crc >> 1) ^ (0xedb88320U & -(crc & 1));
	}
	return crc;
}

static int parse_uuid(const char *s, uint8_t *u)
{
	int n = 0;

	while (*s && n < ZONEFS_UUID_SIZE) {
		unsigned int v;

		if (*s == '-') {
			s++;
			continue;
		}
		if (sscanf(s, "%2x", &v) != 1 || !s[1])
			return -1;
		u[n++] = v;
		s += 2;
	}
	return (n == ZONEFS_UUID_SIZE && !*s) ? 0 : -1;
}

static unsigned long parse_num(const char *s, int base, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, base);
	if (errno || end == s || *end) {
		fprintf(stderr, "mkzonefs: bad %s value '%s'\n", what, s);
		exit(2);
	}
	return v;
}

static void parse_features(char *arg, struct zonefs_super *sb, uint64_t *features)
{
	char *tok, *save = NULL;

	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "aggr_cnv")) {
			*features |= ZONEFS_F_AGGRCNV;
		} else if (!strncmp(tok, "uid=", 4)) {
			*features |= ZONEFS_F_UID;
			sb->s_uid = htole32(parse_num(tok + 4, 10, "uid"));
		} else if (!strncmp(tok, "gid=", 4)) {
			*features |= ZONEFS_F_GID;
			sb->s_gid = htole32(parse_num(tok + 4, 10, "gid"));
		} else if (!strncmp(tok, "perm=", 5)) {
			*features |= ZONEFS_F_PERM;
			sb->s_perm = htole32(parse_num(tok + 5, 8, "perm"));
		} else if (tok[0] >= '0' && tok[0] <= '9') {
			*features |= strtoull(tok, NULL, 0);
		} else {
			fprintf(stderr, "mkzonefs: unknown feature '%s'\n", tok);
			exit(2);
		}
	}
}

static struct blk_zone_report *report_zones(int fd, unsigned int nr)
{
	struct blk_zone_report *rep;
	unsigned int done = 0;
	struct blk_zone *all;
	uint64_t sector = 0;

	all = calloc(nr, sizeof(*all));
	rep = malloc(sizeof(*rep) + nr * sizeof(struct blk_zone));
	if (!all || !rep)
		die("malloc");
	while (done < nr) {
		rep->sector = sector;
		rep->nr_zones = nr - done;
		rep->flags = 0;
		if (ioctl(fd, BLKREPORTZONE, rep) < 0)
			die("BLKREPORTZONE");
		if (!rep->nr_zones)
			break;
		memcpy(&all[done], rep->zones, rep->nr_zones * sizeof(struct blk_zone));
		done += rep->nr_zones;
		sector = all[done - 1].start + all[done - 1].len;
	}
	if (done != nr) {
		fprintf(stderr, "mkzonefs: zone report has %u of %u zones\n", done, nr);
		exit(1);
	}
	rep->sector = 0;
	rep->nr_zones = nr;
	memcpy(rep->zones, all, nr * sizeof(*all));
	free(all);
	return rep;
}

static int zone_op(int fd, unsigned long op, const struct blk_zone *z)
{
	struct blk_zone_range r = { .sector = z->start, .nr_sectors = z->len };

	return ioctl(fd, op, &r);
}

int main(int argc, char **argv)
{
	struct zonefs_super *sb;
	struct blk_zone_report *rep;
	struct blk_zone *z0;
	uint64_t features = 0;
	const char *corrupt = NULL, *uuid = NULL, *label = NULL;
	unsigned int nr_zones, zone_sectors, i, nr_conv = 0, nr_seq = 0, nr_reset = 0;
	int reset = 1, fd, c;
	struct stat st;

	if (posix_memalign((void **)&sb, 4096, sizeof(*sb)))
		die("posix_memalign");
	memset(sb, 0, sizeof(*sb));

	while ((c = getopt(argc, argv, "f:o:L:U:nC:qh")) != -1) {
		switch (c) {
		case 'f':
		case 'o':
			parse_features(optarg, sb, &features);
			break;
		case 'L':
			label = optarg;
			break;
		case 'U':
			uuid = optarg;
			break;
		case 'n':
			reset = 0;
			break;
		case 'C':
			corrupt = optarg;
			if (strcmp(corrupt, "crc") && strcmp(corrupt, "magic") &&
			    strcmp(corrupt, "reserved"))
				usage();
			break;
		case 'q':
			quiet = 1;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();

	fd = open(argv[optind], O_RDWR | O_EXCL);
	if (fd < 0)
		die(argv[optind]);
	if (fstat(fd, &st) || !S_ISBLK(st.st_mode)) {
		fprintf(stderr, "mkzonefs: %s is not a block device\n", argv[optind]);
		return 1;
	}
	if (ioctl(fd, BLKGETZONESZ, &zone_sectors) < 0)
		die("BLKGETZONESZ");
	if (!zone_sectors) {
		fprintf(stderr, "mkzonefs: %s is not a zoned block device\n", argv[optind]);
		return 1;
	}
	if (ioctl(fd, BLKGETNRZONES, &nr_zones) < 0)
		die("BLKGETNRZONES");
	if (nr_zones < 2) {
		fprintf(stderr, "mkzonefs: %s has %u zone(s): zonefs needs at least 2\n",
			argv[optind], nr_zones);
		return 1;
	}
	rep = report_zones(fd, nr_zones);
	z0 = &rep->zones[0];

	/* The super block itself. */
	sb->s_magic = htole32(ZONEFS_MAGIC);
	if (label)
		memcpy(sb->s_label, label, strnlen(label, ZONEFS_LABEL_LEN));
	if (uuid) {
		if (parse_uuid(uuid, sb->s_uuid)) {
			fprintf(stderr, "mkzonefs: bad uuid '%s'\n", uuid);
			return 2;
		}
	} else {
		if (getrandom(sb->s_uuid, sizeof(sb->s_uuid), 0) != sizeof(sb->s_uuid))
			die("getrandom");
		sb->s_uuid[6] = (sb->s_uuid[6] & 0x0f) | 0x40;	/* version 4 */
		sb->s_uuid[8] = (sb->s_uuid[8] & 0x3f) | 0x80;	/* RFC 4122 variant */
	}
	sb->s_features = htole64(features);
	if (corrupt && !strcmp(corrupt, "reserved"))
		sb->s_reserved[sizeof(sb->s_reserved) - 1] = 0x5a;
	sb->s_crc = 0;
	sb->s_crc = htole32(crc32_le(~0U, sb, sizeof(*sb)));
	if (corrupt && !strcmp(corrupt, "crc"))
		sb->s_crc ^= htole32(1);
	if (corrupt && !strcmp(corrupt, "magic"))
		sb->s_magic = htole32(ZONEFS_MAGIC ^ 0x01000000);	/* CRC still right */

	/* Empty every other sequential zone, so files start empty. */
	for (i = 0; i < nr_zones; i++) {
		struct blk_zone *z = &rep->zones[i];

		if (z->type == BLK_ZONE_TYPE_CONVENTIONAL) {
			if (i)
				nr_conv++;
			continue;
		}
		if (i)
			nr_seq++;
		if (!i || !reset || z->cond == BLK_ZONE_COND_EMPTY)
			continue;
		if (z->cond == BLK_ZONE_COND_READONLY || z->cond == BLK_ZONE_COND_OFFLINE) {
			fprintf(stderr, "mkzonefs: zone %u (sector %llu) is %s: left as is\n", i,
				(unsigned long long)z->start,
				z->cond == BLK_ZONE_COND_OFFLINE ? "offline" : "read-only");
			continue;
		}
		if (zone_op(fd, BLKRESETZONE, z) < 0)
			die("BLKRESETZONE");
		nr_reset++;
	}

	if (z0->type == BLK_ZONE_TYPE_CONVENTIONAL) {
		if (pwrite(fd, sb, sizeof(*sb), 0) != sizeof(*sb))
			die("write super block");
		if (fsync(fd))
			die("fsync");
	} else {
		/* A sequential zone 0: write at its start, then make it full. */
		int dfd = open(argv[optind], O_WRONLY | O_DIRECT);

		if (dfd < 0)
			die("open O_DIRECT");
		if (zone_op(fd, BLKRESETZONE, z0) < 0)
			die("BLKRESETZONE zone 0");
		if (pwrite(dfd, sb, sizeof(*sb), 0) != sizeof(*sb))
			die("write super block");
		if (fsync(dfd))
			die("fsync");
		if (zone_op(fd, BLKFINISHZONE, z0) < 0)
			die("BLKFINISHZONE zone 0");
		close(dfd);
	}
	/* Drop the block device's cached pages: the kernel reads sector 0 with a bio. */
	ioctl(fd, BLKFLSBUF, 0);
	close(fd);

	msg("mkzonefs: %s: %u zones of %u sectors, super block in a %s zone 0, "
	    "%u conventional and %u sequential file zone(s), %u reset, features 0x%" PRIx64
	    "%s%s\n", argv[optind], nr_zones, zone_sectors,
	    z0->type == BLK_ZONE_TYPE_CONVENTIONAL ? "conventional" : "sequential",
	    nr_conv, nr_seq, nr_reset, features, corrupt ? ", corrupted: " : "",
	    corrupt ? corrupt : "");
	free(rep);
	return 0;
}
