/*
 * The transport table: adding a transport means its folder under
 * transport/ and one entry here. Also the order in which the setting
 * transport= tries them.
 */
#include <string.h>

#include "transport.h"

static const struct transport_ops *const transports[] = {&self_transport, &tcp_transport,
							  &verbs_transport};

const struct transport_ops *transport_find(const char *name)
{
	for (size_t i = 0; i < sizeof(transports) / sizeof(transports[0]); i++)
		if (!strcmp(transports[i]->name, name))
			return transports[i];
	return NULL;
}

/* Setting transport=: the transports to start, the first that starts
 * wins. Without peers (one node): self, which starts nothing - no network
 * transport, no socket, same-node copies only. */
static const struct {
	const char *setting;
	const char *order[2];
} transport_choices[] = {
	{"tcp", {"tcp", NULL}},
	{"verbs", {"verbs", NULL}},
	{"auto", {"verbs", "tcp"}},
};

const char *const *transport_order(const char *setting, int network)
{
	static const char *const one_node[2] = {"self", NULL};
	for (size_t i = 0; i < sizeof(transport_choices) / sizeof(transport_choices[0]); i++)
		if (!strcmp(transport_choices[i].setting, setting))
			return network ? transport_choices[i].order : one_node;
	return NULL;
}
