package dev.ferry.rpc.internal.store;

import java.util.HashMap;
import java.util.Map;

/**
 * The rendezvous variables of {@code env://} filled in from a scheduler's own, so a program started
 * by {@code srun} or as a Kubernetes Indexed Job needs neither code changes nor a wrapper script.
 * Variables the user (or {@code ferry run}, {@code torchrun}) set always win; only missing ones are
 * derived:
 *
 * <pre>
 *   Slurm (SLURM_PROCID set)           Kubernetes Indexed Job (JOB_COMPLETION_INDEX set)
 *   RANK        = SLURM_PROCID         RANK = JOB_COMPLETION_INDEX
 *   WORLD_SIZE  = SLURM_NTASKS         (WORLD_SIZE, MASTER_ADDR: set in the manifest, since
 *   LOCAL_RANK  = SLURM_LOCALID         the pod cannot see its Job's size or Service name)
 *   MASTER_ADDR = first host of SLURM_JOB_NODELIST (else SLURM_NODELIST), compressed syntax
 *   MASTER_PORT = 29500, PyTorch's default, where Slurm gives none
 * </pre>
 *
 * <p>Applied once, to the environment captured at {@code initRpc}.
 */
public final class SchedulerEnvironment {
    /** PyTorch's default {@code MASTER_PORT}. */
    public static final String DEFAULT_MASTER_PORT = "29500";

    private SchedulerEnvironment() {
    }

    /** {@code environment} plus what its scheduler variables imply; a new map. */
    public static Map<String, String> withRendezvousVariables(Map<String, String> environment) {
        Map<String, String> env = new HashMap<>(environment);
        if (present(env, "SLURM_PROCID")) {
            fill(env, "RANK", env.get("SLURM_PROCID"));
            fill(env, "WORLD_SIZE", env.get("SLURM_NTASKS"));
            fill(env, "LOCAL_RANK", env.get("SLURM_LOCALID"));
            String nodes = present(env, "SLURM_JOB_NODELIST") ? env.get("SLURM_JOB_NODELIST") : env.get("SLURM_NODELIST");
            if (nodes != null && !nodes.isBlank()) {
                fill(env, "MASTER_ADDR", SlurmHostList.first(nodes.strip()));
            }
            fill(env, "MASTER_PORT", DEFAULT_MASTER_PORT);
        } else if (present(env, "JOB_COMPLETION_INDEX")) {
            fill(env, "RANK", env.get("JOB_COMPLETION_INDEX"));
        }
        return env;
    }

    private static boolean present(Map<String, String> env, String name) {
        String value = env.get(name);
        return value != null && !value.isBlank();
    }

    private static void fill(Map<String, String> env, String name, String value) {
        if (!present(env, name) && value != null && !value.isBlank()) {
            env.put(name, value.strip());
        }
    }
}
