/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User-space helpers of the group's own tests: network namespaces, devices
 * (up, MTU, TSO/GSO through SIOCETHTOOL, addresses, a veth pair through
 * rtnetlink), sysctls, a cgroup v2 hierarchy, TCP connections over
 * loopback or veth, and a capture of the TCP segments on a device (an
 * AF_PACKET socket with PACKET_VNET_HDR, so that a GSO packet says how it
 * will be cut) with their options parsed.
 * Functions return 0 or a negative errno unless they say otherwise.
 */
#ifndef HDR_UTIL_H
#define HDR_UTIL_H

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/if_packet.h>
#include <linux/ipv6.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <linux/veth.h>
#include <linux/virtio_net.h>
#include "hdr_opt.h"
#include "../file_util.h"

#define CG_ROOT "/tmp/hdr-opt-cgroup"

static inline void msleep(unsigned int ms)
{
	usleep(ms * 1000);
}

/* ---------------------------------------------------------------- cgroups */

static inline int cg_mount(void)
{
	struct stat st;

	if (!stat(CG_ROOT "/cgroup.procs", &st))
		return 0;
	mkdir(CG_ROOT, 0755);
	if (mount("none", CG_ROOT, "cgroup2", 0, NULL) && errno != EBUSY)
		return -errno;
	return 0;
}

/* Make (if needed) CG_ROOT/<path>; returns an fd of the directory. */
static inline int cg_make(const char *path)
{
	char p[256];
	int err = cg_mount();

	if (err)
		return err;
	snprintf(p, sizeof(p), "%s/%s", CG_ROOT, path);
	if (mkdir(p, 0755) && errno != EEXIST)
		return -errno;
	err = open(p, O_RDONLY | O_DIRECTORY);
	return err < 0 ? -errno : err;
}

static inline int cg_enter(const char *path)
{
	char p[256], pid[32];

	snprintf(p, sizeof(p), "%s/%s/cgroup.procs", CG_ROOT, path);
	snprintf(pid, sizeof(pid), "%d", getpid());
	return ktest_write_str(p, pid);
}

/* ------------------------------------------------------------- namespaces */

static inline int if_flags_up(const char *ifname)
{
	struct ifreq ifr = {};
	int s = socket(AF_INET, SOCK_DGRAM, 0), err = 0;

	if (s < 0)
		return -errno;
	strncpy(ifr.ifr_name, ifname, IFNAMSIZ - 1);
	if (ioctl(s, SIOCGIFFLAGS, &ifr))
		err = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (!err && ioctl(s, SIOCSIFFLAGS, &ifr))
		err = -errno;
	close(s);
	return err;
}

static inline int if_mtu(const char *ifname, int mtu)
{
	struct ifreq ifr = {};
	int s = socket(AF_INET, SOCK_DGRAM, 0), err = 0;

	if (s < 0)
		return -errno;
	strncpy(ifr.ifr_name, ifname, IFNAMSIZ - 1);
	ifr.ifr_mtu = mtu;
	if (ioctl(s, SIOCSIFMTU, &ifr))
		err = -errno;
	close(s);
	return err;
}

static inline int ethtool_val(const char *ifname, __u32 cmd, __u32 *val)
{
	struct ethtool_value ev = { .cmd = cmd, .data = *val };
	struct ifreq ifr = {};
	int s = socket(AF_INET, SOCK_DGRAM, 0), err = 0;

	if (s < 0)
		return -errno;
	strncpy(ifr.ifr_name, ifname, IFNAMSIZ - 1);
	ifr.ifr_data = (void *)&ev;
	if (ioctl(s, SIOCETHTOOL, &ifr))
		err = -errno;
	*val = ev.data;
	close(s);
	return err;
}

/* TSO and GSO together on or off, read back. */
static inline int if_gso(const char *ifname, int on)
{
	__u32 v;
	int err;

	v = on;
	err = ethtool_val(ifname, ETHTOOL_STSO, &v);
	if (err)
		return err;
	v = on;
	err = ethtool_val(ifname, ETHTOOL_SGSO, &v);
	if (err)
		return err;
	v = 0;
	err = ethtool_val(ifname, ETHTOOL_GTSO, &v);
	if (err)
		return err;
	if (!!v != !!on)
		return -EIO;
	v = 0;
	err = ethtool_val(ifname, ETHTOOL_GGSO, &v);
	if (err)
		return err;
	return !!v == !!on ? 0 : -EIO;
}

static inline int if_addr4(const char *ifname, const char *addr, const char *mask)
{
	struct ifreq ifr = {};
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
	int s = socket(AF_INET, SOCK_DGRAM, 0), err = 0;

	if (s < 0)
		return -errno;
	strncpy(ifr.ifr_name, ifname, IFNAMSIZ - 1);
	sin->sin_family = AF_INET;
	inet_pton(AF_INET, addr, &sin->sin_addr);
	if (ioctl(s, SIOCSIFADDR, &ifr))
		err = -errno;
	inet_pton(AF_INET, mask, &sin->sin_addr);
	if (!err && ioctl(s, SIOCSIFNETMASK, &ifr))
		err = -errno;
	close(s);
	return err;
}

static inline int if_addr6(const char *ifname, const char *addr, int prefix)
{
	struct in6_ifreq ifr6 = {};
	int s = socket(AF_INET6, SOCK_DGRAM, 0), err = 0;

	if (s < 0)
		return -errno;
	ifr6.ifr6_ifindex = if_nametoindex(ifname);
	ifr6.ifr6_prefixlen = prefix;
	inet_pton(AF_INET6, addr, &ifr6.ifr6_addr);
	if (ioctl(s, SIOCSIFADDR, &ifr6))
		err = -errno;
	close(s);
	return err;
}

/* A new network namespace for the calling process, with lo up. */
static inline int netns_new(void)
{
	if (unshare(CLONE_NEWNET))
		return -errno;
	return if_flags_up("lo");
}

static inline int netns_fd(void)
{
	int fd = open("/proc/self/ns/net", O_RDONLY);

	return fd < 0 ? -errno : fd;
}

static inline int netns_set(int fd)
{
	return setns(fd, CLONE_NEWNET) ? -errno : 0;
}

/* Let IPv6 addresses be used at once (no duplicate address detection). */
static inline void netns_no_dad(void)
{
	ktest_write_str("/proc/sys/net/ipv6/conf/all/accept_dad", "0");
	ktest_write_str("/proc/sys/net/ipv6/conf/default/accept_dad", "0");
}

struct nlreq {
	struct nlmsghdr nh;
	struct ifinfomsg ifi;
	char buf[512];
};

static inline struct rtattr *nl_add(struct nlmsghdr *nh, int type, const void *data, int len)
{
	struct rtattr *rta = (struct rtattr *)((char *)nh + NLMSG_ALIGN(nh->nlmsg_len));

	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(rta), data, len);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + RTA_ALIGN(rta->rta_len);
	return rta;
}

static inline void nl_end(struct nlmsghdr *nh, struct rtattr *nest)
{
	nest->rta_len = (char *)nh + nh->nlmsg_len - (char *)nest;
}

/* veth pair @a (here) and @b (in the namespace @nsfd_b). */
static inline int veth_pair(const char *a, const char *b, int nsfd_b)
{
	struct nlreq req = {};
	struct rtattr *linkinfo, *data, *peer;
	struct ifinfomsg peer_ifi = {};
	struct {
		struct nlmsghdr nh;
		struct nlmsgerr err;
	} ack;
	int s, err;

	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
	req.nh.nlmsg_type = RTM_NEWLINK;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK;
	req.ifi.ifi_family = AF_UNSPEC;
	nl_add(&req.nh, IFLA_IFNAME, a, strlen(a) + 1);
	linkinfo = nl_add(&req.nh, IFLA_LINKINFO, NULL, 0);
	nl_add(&req.nh, IFLA_INFO_KIND, "veth", 4);
	data = nl_add(&req.nh, IFLA_INFO_DATA, NULL, 0);
	peer = nl_add(&req.nh, VETH_INFO_PEER, NULL, 0);
	/* the peer's ifinfomsg, then its attributes */
	memcpy(RTA_DATA(peer), &peer_ifi, sizeof(peer_ifi));
	req.nh.nlmsg_len += NLMSG_ALIGN(sizeof(peer_ifi));
	nl_add(&req.nh, IFLA_IFNAME, b, strlen(b) + 1);
	nl_add(&req.nh, IFLA_NET_NS_FD, &nsfd_b, sizeof(nsfd_b));
	nl_end(&req.nh, peer);
	nl_end(&req.nh, data);
	nl_end(&req.nh, linkinfo);

	s = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	if (s < 0)
		return -errno;
	if (send(s, &req, req.nh.nlmsg_len, 0) < 0) {
		err = -errno;
		close(s);
		return err;
	}
	if (recv(s, &ack, sizeof(ack), 0) < 0)
		err = -errno;
	else if (ack.nh.nlmsg_type == NLMSG_ERROR)
		err = ack.err.error;
	else
		err = -EPROTO;
	close(s);
	return err;
}

/* ---------------------------------------------------------------- sockets */

union addr {
	struct sockaddr sa;
	struct sockaddr_in v4;
	struct sockaddr_in6 v6;
};

static inline socklen_t make_addr(int fam, const char *ip, int port, union addr *a)
{
	memset(a, 0, sizeof(*a));
	if (fam == AF_INET) {
		a->v4.sin_family = AF_INET;
		a->v4.sin_port = htons(port);
		inet_pton(AF_INET, ip, &a->v4.sin_addr);
		return sizeof(a->v4);
	}
	a->v6.sin6_family = AF_INET6;
	a->v6.sin6_port = htons(port);
	inet_pton(AF_INET6, ip, &a->v6.sin6_addr);
	return sizeof(a->v6);
}

static inline void sock_timeouts(int fd, int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* A listening socket on ip:port; a fresh IPv6 address may need a moment. */
static inline int tcp_listen_port(int fam, const char *ip, int port)
{
	union addr a;
	socklen_t len = make_addr(fam, ip, port, &a);
	int fd, one = 1, i, err;

	fd = socket(fam, SOCK_STREAM, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	for (i = 0; i < 100; i++) {
		if (!bind(fd, &a.sa, len))
			break;
		err = -errno;
		if (err != -EADDRNOTAVAIL) {
			close(fd);
			return err;
		}
		msleep(20);
	}
	if (listen(fd, 8)) {
		err = -errno;
		close(fd);
		return err;
	}
	sock_timeouts(fd, 5000);
	return fd;
}

static inline int tcp_listen(int fam, const char *ip)
{
	return tcp_listen_port(fam, ip, SRV_PORT);
}

static inline int tcp_connect_port(int fam, const char *ip, int port)
{
	union addr a;
	socklen_t len = make_addr(fam, ip, port, &a);
	int fd, err, i;

	for (i = 0; i < 50; i++) {
		fd = socket(fam, SOCK_STREAM, 0);
		if (fd < 0)
			return -errno;
		sock_timeouts(fd, 5000);
		if (!connect(fd, &a.sa, len))
			return fd;
		err = -errno;
		close(fd);
		/* a fresh IPv6 address or route */
		if (err != -EADDRNOTAVAIL && err != -ENETUNREACH)
			return err;
		msleep(20);
	}
	return err;
}

static inline int tcp_connect(int fam, const char *ip)
{
	return tcp_connect_port(fam, ip, SRV_PORT);
}

static inline int tcp_accept(int srv)
{
	int fd = accept(srv, NULL, NULL);

	if (fd < 0)
		return -errno;
	sock_timeouts(fd, 5000);
	return fd;
}

static inline int local_port(int fd)
{
	union addr a;
	socklen_t len = sizeof(a);

	if (getsockname(fd, &a.sa, &len))
		return -errno;
	return ntohs(a.sa.sa_family == AF_INET ? a.v4.sin_port : a.v6.sin6_port);
}

/* Read exactly @len bytes (or fail). */
static inline int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = read(fd, (char *)buf + got, len - got);
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EPIPE;
		got += n;
	}
	return 0;
}

static inline int send_full(int fd, const void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = send(fd, (const char *)buf + done, len - done, 0);
		if (n < 0)
			return -errno;
		done += n;
	}
	return 0;
}

/* ---------------------------------------------------------------- capture */

struct pkt {
	int outgoing;		/* PACKET_OUTGOING (else received on the device) */
	int fam;
	int sport, dport;
	unsigned char flags;
	int doff;		/* TCP header length, bytes */
	int optlen;
	unsigned char opts[40];
	int payload;		/* TCP payload, the whole GSO packet's */
	int l3len;		/* IP packet length (whole GSO packet) */
	int seglen;		/* the longest IP packet it makes on the wire */
	int iphlen;
	int gso_type, gso_size;
};

#define MAX_PKTS 4096

/* An AF_PACKET socket on @ifname (in the current namespace), all protocols. */
static inline int cap_open(const char *ifname)
{
	struct sockaddr_ll sll = {};
	int fd, one = 1, sz = 32 << 20;

	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz))) {
		close(fd);
		return -errno;
	}
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = if_nametoindex(ifname);
	if (!sll.sll_ifindex || bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		close(fd);
		return -ENODEV;
	}
	return fd;
}

/*
 * Every TCP segment to or from SRV_PORT queued on the capture socket, in
 * order.  @outgoing_only: keep only what the device sent (on lo every
 * packet is seen twice, sent and received).  Returns the count.
 */
static inline int cap_read(int fd, struct pkt *pk, int max, int outgoing_only)
{
	unsigned char buf[512];
	struct sockaddr_ll from;
	socklen_t fl;
	int n = 0;

	for (;;) {
		struct virtio_net_hdr *vh = (void *)buf;
		unsigned char *l3, *th;
		struct pkt *p;
		ssize_t len;
		int eth_proto, iphlen, l3len, proto;

		fl = sizeof(from);
		len = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC,
			       (struct sockaddr *)&from, &fl);
		if (len < 0)
			break;
		if (len < (ssize_t)sizeof(*vh) + 14 + 40)
			continue;
		if (outgoing_only && from.sll_pkttype != PACKET_OUTGOING)
			continue;
		eth_proto = buf[sizeof(*vh) + 12] << 8 | buf[sizeof(*vh) + 13];
		l3 = buf + sizeof(*vh) + 14;
		if (eth_proto == ETH_P_IP) {
			iphlen = (l3[0] & 0xf) * 4;
			l3len = l3[2] << 8 | l3[3];
			proto = l3[9];
		} else if (eth_proto == ETH_P_IPV6) {
			iphlen = 40;
			l3len = 40 + (l3[4] << 8 | l3[5]);
			proto = l3[6];
		} else {
			continue;
		}
		if (proto != IPPROTO_TCP)
			continue;
		th = l3 + iphlen;
		if (th + 60 > buf + sizeof(buf))
			continue;
		if ((th[0] << 8 | th[1]) != SRV_PORT && (th[2] << 8 | th[3]) != SRV_PORT)
			continue;
		if (n >= max)
			break;
		p = &pk[n++];
		memset(p, 0, sizeof(*p));
		p->outgoing = from.sll_pkttype == PACKET_OUTGOING;
		p->fam = eth_proto == ETH_P_IP ? AF_INET : AF_INET6;
		p->sport = th[0] << 8 | th[1];
		p->dport = th[2] << 8 | th[3];
		p->flags = th[13];
		p->doff = (th[12] >> 4) * 4;
		p->optlen = p->doff - 20;
		if (p->optlen > 0 && p->optlen <= 40)
			memcpy(p->opts, th + 20, p->optlen);
		p->iphlen = iphlen;
		p->l3len = l3len;
		p->payload = l3len - iphlen - p->doff;
		p->gso_type = vh->gso_type & ~VIRTIO_NET_HDR_GSO_ECN;
		p->gso_size = vh->gso_size;
		if (p->gso_type != VIRTIO_NET_HDR_GSO_NONE && p->gso_size &&
		    p->payload > p->gso_size)
			p->seglen = iphlen + p->doff + p->gso_size;
		else
			p->seglen = len - sizeof(*vh) - 14;
	}
	return n;
}

/*
 * Offset of option @kind (with the 2-byte @magic for kinds 253/254, when
 * @magic is set) in @p's options, or -1; walks the options as TCP does.
 */
static inline int opt_find(const struct pkt *p, int kind, int magic)
{
	int i = 0;

	while (i < p->optlen) {
		int k = p->opts[i], l;

		if (k == 0)
			return -1;
		if (k == 1) {
			i++;
			continue;
		}
		if (i + 1 >= p->optlen)
			return -1;
		l = p->opts[i + 1];
		if (l < 2 || i + l > p->optlen)
			return -1;
		if (k == kind && (!magic || (l >= 4 && (p->opts[i + 2] << 8 | p->opts[i + 3]) == magic)))
			return i;
		i += l;
	}
	return -1;
}

static inline const char *pkt_str(const struct pkt *p, char *s, size_t n)
{
	int o = snprintf(s, n, "%d>%d f=%02x doff=%d len=%d seg=%d gso=%d/%d opts=",
			 p->sport, p->dport, p->flags, p->doff, p->payload, p->seglen,
			 p->gso_type, p->gso_size);
	int i;

	for (i = 0; i < p->optlen && o < (int)n - 3; i++)
		o += snprintf(s + o, n - o, "%02x", p->opts[i]);
	return s;
}

#endif
