package dev.ferry.rpc.internal.store;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.RpcException.Code;
import java.util.ArrayList;
import java.util.List;

/**
 * Slurm's compressed host lists, as in {@code SLURM_JOB_NODELIST}: comma-separated names, each
 * with any number of bracketed ranges that keep their zero padding, expanded in Slurm's order
 * ({@code scontrol show hostnames}).
 *
 * <pre>
 * node[01-04,07]        node01 node02 node03 node04 node07
 * gpu1,cpu[8-9]         gpu1 cpu8 cpu9
 * rack[1-2]-n[1-2]      rack1-n1 rack1-n2 rack2-n1 rack2-n2
 * </pre>
 *
 * <p>A list that expands to more than {@value #MAX_HOSTS} names is refused rather than built.
 */
public final class SlurmHostList {
    /** More than any Slurm job's node count; bounds what a malformed range can make us build. */
    static final int MAX_HOSTS = 1 << 17;

    private SlurmHostList() {
    }

    /** The first host of {@code list}: Slurm's batch host, where rank 0 runs. */
    public static String first(String list) {
        return expandItem(list, topLevelItems(list).get(0), MAX_HOSTS).get(0);
    }

    /**
     * Every host of {@code list}, in order.
     *
     * @throws RpcException INVALID_ARGUMENT for a malformed list
     */
    public static List<String> expand(String list) {
        List<String> hosts = new ArrayList<>();
        for (String item : topLevelItems(list)) {
            hosts.addAll(expandItem(list, item, MAX_HOSTS - hosts.size()));
        }
        return hosts;
    }

    /** The comma-separated items outside brackets. */
    private static List<String> topLevelItems(String list) {
        List<String> items = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < list.length(); i++) {
            char c = list.charAt(i);
            if (c == '[') {
                depth++;
            } else if (c == ']') {
                depth--;
            }
            if (depth < 0 || depth > 1) {
                throw malformed(list, "unbalanced brackets");
            }
            if (c == ',' && depth == 0) {
                items.add(list.substring(start, i));
                start = i + 1;
            }
        }
        if (depth != 0) {
            throw malformed(list, "unbalanced brackets");
        }
        items.add(list.substring(start));
        for (String item : items) {
            if (item.isBlank()) {
                throw malformed(list, "empty host name");
            }
        }
        return items;
    }

    /** One item's hosts, the cartesian product of its ranges; more than {@code limit} is refused. */
    private static List<String> expandItem(String list, String item, int limit) {
        int open = item.indexOf('[');
        if (open < 0) {
            return List.of(item.strip());
        }
        int close = item.indexOf(']', open);
        String prefix = item.substring(0, open);
        List<String> tails = expandItem(list, item.substring(close + 1), limit);
        List<String> hosts = new ArrayList<>();
        for (String range : item.substring(open + 1, close).split(",")) {
            String[] bounds = range.split("-", -1);
            if (bounds.length > 2 || bounds[0].isEmpty() || !bounds[0].chars().allMatch(Character::isDigit)
                    || (bounds.length == 2 && (bounds[1].isEmpty() || !bounds[1].chars().allMatch(Character::isDigit)))) {
                throw malformed(list, "'" + range + "' is not N or N-M");
            }
            long low = Long.parseLong(bounds[0]);
            long high = bounds.length == 2 ? Long.parseLong(bounds[1]) : low;
            if (high < low) {
                throw malformed(list, "range " + range + " runs backwards");
            }
            int width = bounds[0].length();
            for (long n = low; n <= high; n++) {
                String number = String.format("%0" + width + "d", n);
                for (String tail : tails) {
                    if (hosts.size() >= limit) {
                        throw malformed(list, "more than " + MAX_HOSTS + " hosts");
                    }
                    hosts.add(prefix + number + tail);
                }
            }
        }
        return hosts;
    }

    private static RpcException malformed(String list, String why) {
        return new RpcException(Code.INVALID_ARGUMENT, "Malformed Slurm host list '" + list + "': " + why);
    }
}
