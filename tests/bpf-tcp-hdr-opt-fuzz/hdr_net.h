/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Network set-up over rtnetlink for the bpf-tcp-hdr-opt fuzz group and
 * benchmark (busybox's ip can neither add a veth pair nor a neighbour): veth
 * pairs, moving a link to another namespace, links up, addresses (IPv6
 * without duplicate address detection), permanent neighbours, sysctls.
 * Every function returns 0 or a negative errno.
 */
#ifndef HDR_NET_H
#define HDR_NET_H

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <linux/veth.h>

struct nl_req {
	struct nlmsghdr n;
	char buf[1024];
};

static inline void nl_attr(struct nlmsghdr *n, int type, const void *data, int len)
{
	struct rtattr *rta = (struct rtattr *)((char *)n + NLMSG_ALIGN(n->nlmsg_len));

	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(rta), data, len);
	n->nlmsg_len = NLMSG_ALIGN(n->nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

static inline struct rtattr *nl_nest(struct nlmsghdr *n, int type)
{
	struct rtattr *rta = (struct rtattr *)((char *)n + NLMSG_ALIGN(n->nlmsg_len));

	nl_attr(n, type, NULL, 0);
	return rta;
}

static inline void nl_nest_end(struct nlmsghdr *n, struct rtattr *rta)
{
	rta->rta_len = (char *)n + n->nlmsg_len - (char *)rta;
}

/* Send one request, wait for its acknowledgement. */
static inline int nl_talk(struct nlmsghdr *n)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	char buf[4096];
	int fd, len, err = 0;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	n->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	n->nlmsg_seq = 1;
	if (sendto(fd, n, n->nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		goto out;
	}
	len = recv(fd, buf, sizeof(buf), 0);
	if (len < 0) {
		err = -errno;
		goto out;
	}
	for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (unsigned int)len);
	     h = NLMSG_NEXT(h, len)) {
		if (h->nlmsg_type == NLMSG_ERROR) {
			err = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			break;
		}
	}
out:
	close(fd);
	return err;
}

/* A veth pair @a / @b; @b goes to the namespace of @ns_fd when it is >= 0. */
static inline int net_veth_add(const char *a, const char *b, int ns_fd)
{
	struct nl_req r = {};
	struct ifinfomsg *ifi, *peer;
	struct rtattr *li, *data, *pe;

	r.n.nlmsg_len = NLMSG_LENGTH(sizeof(*ifi));
	r.n.nlmsg_type = RTM_NEWLINK;
	r.n.nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
	ifi = NLMSG_DATA(&r.n);
	ifi->ifi_family = AF_UNSPEC;
	nl_attr(&r.n, IFLA_IFNAME, a, strlen(a) + 1);
	li = nl_nest(&r.n, IFLA_LINKINFO);
	nl_attr(&r.n, IFLA_INFO_KIND, "veth", 4);
	data = nl_nest(&r.n, IFLA_INFO_DATA);
	pe = nl_nest(&r.n, VETH_INFO_PEER);
	peer = (struct ifinfomsg *)((char *)&r.n + r.n.nlmsg_len);
	memset(peer, 0, sizeof(*peer));
	r.n.nlmsg_len += sizeof(*peer);
	nl_attr(&r.n, IFLA_IFNAME, b, strlen(b) + 1);
	if (ns_fd >= 0)
		nl_attr(&r.n, IFLA_NET_NS_FD, &ns_fd, sizeof(ns_fd));
	nl_nest_end(&r.n, pe);
	nl_nest_end(&r.n, data);
	nl_nest_end(&r.n, li);
	return nl_talk(&r.n);
}

static inline int net_link_up(const char *name)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		err = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (!err && ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		err = -errno;
	close(fd);
	return err;
}

static inline int net_mtu(const char *name, int mtu)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_mtu = mtu;
	if (ioctl(fd, SIOCSIFMTU, &ifr) < 0)
		err = -errno;
	close(fd);
	return err;
}

/*
 * Segmentation offloads off (TSO, GSO): the stack cuts every segment of the
 * MSS itself, and how it groups them cannot depend on the pacing rate.
 * (ETHTOOL_STSO and ETHTOOL_SGSO with struct ethtool_value, from the UAPI
 * ethtool.h, which the tree's tools/include copy lacks.)
 */
static inline int net_offload_off(const char *name)
{
	static const __u32 cmds[] = { 0x1f /* ETHTOOL_STSO */, 0x24 /* ETHTOOL_SGSO */ };
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	for (unsigned int i = 0; i < 2 && !err; i++) {
		struct {
			__u32 cmd, data;
		} ev = { cmds[i], 0 };

		ifr.ifr_data = (void *)&ev;
		if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
			err = -errno;
	}
	close(fd);
	return err;
}

/* The most segments one skb of @name may carry (IFLA_GSO_MAX_SEGS). */
static inline int net_gso_max_segs(const char *name, __u32 segs)
{
	struct nl_req r = {};
	struct ifinfomsg *ifi;

	r.n.nlmsg_len = NLMSG_LENGTH(sizeof(*ifi));
	r.n.nlmsg_type = RTM_NEWLINK;
	ifi = NLMSG_DATA(&r.n);
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = if_nametoindex(name);
	if (!ifi->ifi_index)
		return -ENODEV;
	nl_attr(&r.n, IFLA_GSO_MAX_SEGS, &segs, sizeof(segs));
	return nl_talk(&r.n);
}

static inline int net_mac(const char *name, unsigned char mac[6])
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0)
		err = -errno;
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
	return err;
}

static inline int net_addr_add(const char *dev, int family, const void *addr, int prefix)
{
	struct nl_req r = {};
	struct ifaddrmsg *ifa;
	int alen = family == AF_INET ? 4 : 16;
	__u32 flags = IFA_F_NODAD;

	r.n.nlmsg_len = NLMSG_LENGTH(sizeof(*ifa));
	r.n.nlmsg_type = RTM_NEWADDR;
	r.n.nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
	ifa = NLMSG_DATA(&r.n);
	ifa->ifa_family = family;
	ifa->ifa_prefixlen = prefix;
	ifa->ifa_index = if_nametoindex(dev);
	if (!ifa->ifa_index)
		return -ENODEV;
	nl_attr(&r.n, IFA_LOCAL, addr, alen);
	nl_attr(&r.n, IFA_ADDRESS, addr, alen);
	if (family == AF_INET6)
		nl_attr(&r.n, IFA_FLAGS, &flags, sizeof(flags));
	return nl_talk(&r.n);
}

/* A permanent neighbour entry (@del: remove it). */
static inline int net_neigh(const char *dev, int family, const void *addr,
			    const unsigned char mac[6], bool del)
{
	struct nl_req r = {};
	struct ndmsg *nd;

	r.n.nlmsg_len = NLMSG_LENGTH(sizeof(*nd));
	r.n.nlmsg_type = del ? RTM_DELNEIGH : RTM_NEWNEIGH;
	r.n.nlmsg_flags = del ? 0 : NLM_F_CREATE | NLM_F_REPLACE;
	nd = NLMSG_DATA(&r.n);
	nd->ndm_family = family;
	nd->ndm_ifindex = if_nametoindex(dev);
	nd->ndm_state = NUD_PERMANENT;
	if (!nd->ndm_ifindex)
		return -ENODEV;
	nl_attr(&r.n, NDA_DST, addr, family == AF_INET ? 4 : 16);
	if (!del)
		nl_attr(&r.n, NDA_LLADDR, mac, 6);
	return nl_talk(&r.n);
}

static inline int net_sysctl(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		err = -errno;
	close(fd);
	return err;
}

/*
 * A route of @type (RTN_UNICAST, RTN_LOCAL) to @dst/@plen through @dev in
 * @table, replacing one that exists; @quickack sets the route's quickack
 * metric (every ACK sent at once: no delayed ACK whose timing would show)
 * and a locked minimum RTO of 5 s (no retransmission within a test's
 * steps); @del removes the route instead.
 */
static inline int net_route(int family, int table, int type, const void *dst, int plen,
			    const char *dev, const void *prefsrc, bool quickack, bool del)
{
	struct nl_req r = {};
	struct rtmsg *rt;
	struct rtattr *mx;
	int alen = family == AF_INET ? 4 : 16, oif = if_nametoindex(dev);
	__u32 one = 1;

	if (!oif)
		return -ENODEV;
	r.n.nlmsg_len = NLMSG_LENGTH(sizeof(*rt));
	r.n.nlmsg_type = del ? RTM_DELROUTE : RTM_NEWROUTE;
	r.n.nlmsg_flags = del ? 0 : NLM_F_CREATE | NLM_F_REPLACE;
	rt = NLMSG_DATA(&r.n);
	rt->rtm_family = family;
	rt->rtm_dst_len = plen;
	rt->rtm_table = table;
	rt->rtm_protocol = del ? 0 : RTPROT_BOOT;
	rt->rtm_scope = type == RTN_LOCAL ? RT_SCOPE_HOST : RT_SCOPE_LINK;
	rt->rtm_type = type;
	nl_attr(&r.n, RTA_DST, dst, alen);
	nl_attr(&r.n, RTA_OIF, &oif, sizeof(oif));
	if (prefsrc && !del)
		nl_attr(&r.n, RTA_PREFSRC, prefsrc, alen);
	if (quickack && !del) {
		__u32 lock = 1 << RTAX_RTO_MIN, rto_min = 5000;

		mx = nl_nest(&r.n, RTA_METRICS);
		nl_attr(&r.n, RTAX_QUICKACK, &one, sizeof(one));
		nl_attr(&r.n, RTAX_LOCK, &lock, sizeof(lock));
		nl_attr(&r.n, RTAX_RTO_MIN, &rto_min, sizeof(rto_min));
		nl_nest_end(&r.n, mx);
	}
	return nl_talk(&r.n);
}

#endif
