package dev.ferry.rpc.internal.serial;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class FunctionPolicyTest {
    private final FunctionPolicy policy = new FunctionPolicy(List.of("com.example."), Set.of("org.lib.Entry",
            "java.lang.System", "dev.ferry.rpc.internal.agent.DefaultRpcAgent"));

    @Test
    void theAllowListAdmitsItsPackagesAndTheTrustedClasses() {
        assertThat(policy.denialReason("com.example.Ops")).isNull();
        assertThat(policy.denialReason("org.lib.Entry")).isNull();
        assertThat(policy.denialReason("org.lib.Other")).contains("not in the allowed function packages");
    }

    @Test
    void trustNeverOpensTheJdkOrFerrysInternals() {
        assertThat(policy.denialReason("java.lang.System")).contains("JDK class java.lang.System");
        assertThat(policy.denialReason("dev.ferry.rpc.internal.agent.DefaultRpcAgent")).contains("internal class");
        assertThat(policy.denialReason("java.lang.Math")).isNull();
    }

    @Test
    void withoutAnAllowListEveryOtherClassMayBeCalled() {
        FunctionPolicy open = new FunctionPolicy(List.of());
        assertThat(open.denialReason("org.lib.Other")).isNull();
        assertThat(open.denialReason("java.lang.Runtime")).contains("JDK class");
    }
}
