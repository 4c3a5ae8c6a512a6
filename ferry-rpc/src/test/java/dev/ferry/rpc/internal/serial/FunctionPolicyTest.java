package dev.ferry.rpc.internal.serial;

import dev.ferry.rpc.Rpc;
import dev.ferry.rpc.RpcAgent;
import dev.ferry.rpc.internal.agent.SystemCalls;
import dev.ferry.rpc.policy.app.AppOps;
import dev.ferry.rpc.policy.other.MarkedClass;
import dev.ferry.rpc.policy.other.MarkedMethod;
import dev.ferry.rpc.policy.other.Unmarked;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Executable;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The function policy's rules, one by one, on real classes: the application's, the JDK's, Ferry's, a library's. */
class FunctionPolicyTest {
    private static final CodeOrigins ORIGINS = CodeOrigins.of(FunctionPolicyTest.class.getClassLoader());
    private static final FunctionPolicy POLICY = policy(List.of("dev.ferry.rpc.policy.app"), List.of(), Set.of());

    private static FunctionPolicy policy(List<String> application, List<String> allowed, Set<Class<?>> trusted) {
        return new FunctionPolicy(NameList.of(application), NameList.of(allowed), trusted, SystemCalls.class, ORIGINS);
    }

    private static Method method(Class<?> owner, String name, Class<?>... parameters) throws NoSuchMethodException {
        return owner.getDeclaredMethod(name, parameters);
    }

    private static String refusal(FunctionPolicy policy, Executable target) {
        return policy.refusal(target.getDeclaringClass(), target);
    }

    @Test
    void theApplicationsMethodsConstructorsAndLambdasAreCallable() throws Exception {
        assertThat(refusal(POLICY, method(AppOps.class, "add", int.class, int.class))).isNull();
        assertThat(refusal(POLICY, method(AppOps.class, "packagePrivate", int.class))).isNull();
        assertThat(refusal(POLICY, method(AppOps.class, "base"))).isNull();
        assertThat(refusal(POLICY, AppOps.class.getDeclaredConstructor(int.class))).isNull();
        Method lambda = Arrays.stream(AppOps.class.getDeclaredMethods())
                .filter(m -> m.isSynthetic() && m.getName().startsWith("lambda$doubler$")).findFirst().orElseThrow();
        assertThat(refusal(POLICY, lambda)).as("the body of a lambda written in the class").isNull();
    }

    @Test
    void privateMethodsAndConstructorsAreNeverCallable() throws Exception {
        assertThat(refusal(POLICY, method(AppOps.class, "secret", int.class)))
                .startsWith("refused (private method)");
        assertThat(refusal(POLICY, AppOps.class.getDeclaredConstructor())).startsWith("refused (private method)");
        assertThat(refusal(POLICY, method(MarkedClass.class, "hidden", int.class)))
                .as("the mark does not open private methods").startsWith("refused (private method)");
    }

    @Test
    void theJdkIsRefusedWhateverTheListsSay() throws Exception {
        FunctionPolicy wide = policy(List.of("java"), List.of("java.lang.System"), Set.of(System.class, Runtime.class));
        assertThat(refusal(wide, method(System.class, "getProperty", String.class)))
                .startsWith("refused (JDK class)").contains("java.lang.System");
        assertThat(refusal(wide, method(Runtime.class, "getRuntime"))).startsWith("refused (JDK class)");
        assertThat(refusal(POLICY, method(Math.class, "addExact", int.class, int.class)))
                .startsWith("refused (JDK class)").contains("call it from a method or lambda of the application");
    }

    @Test
    void ferrysOwnCodeIsRefusedByWhereItComesFromNotByItsName() throws Exception {
        // The tests' package dev.ferry.rpc declared the application's: Ferry's API in it stays refused.
        FunctionPolicy ferryNamed = policy(List.of("dev.ferry"), List.of("dev.ferry.rpc.Rpc"), Set.of());
        assertThat(refusal(ferryNamed, method(Rpc.class, "shutdown", boolean.class, Duration.class)))
                .startsWith("refused (Ferry's own class)").contains("dev.ferry.rpc.Rpc");
        assertThat(refusal(ferryNamed, method(RpcAgent.class, "shutdown", boolean.class, Duration.class)))
                .startsWith("refused (Ferry's own class)");
        assertThat(refusal(ferryNamed, method(FunctionResolver.class, "resolve", FunctionRef.class)))
                .startsWith("refused (Ferry's own class)");
        assertThat(refusal(ferryNamed, method(AppOps.class, "add", int.class, int.class)))
                .as("the tests' own classes in the same packages").isNull();
        assertThat(ORIGINS.isFerry(Rpc.class)).isTrue();
        assertThat(ORIGINS.isFerry(FunctionPolicyTest.class)).isFalse();
    }

    @Test
    void ferrysSystemCallsAndLibrariesDeclaredEntryPointsAreCallable() throws Exception {
        Method ack = Arrays.stream(SystemCalls.class.getDeclaredMethods()).filter(m -> m.getName().equals("ack"))
                .findFirst().orElseThrow();
        assertThat(refusal(POLICY, ack)).isNull();
        assertThat(POLICY.isSystem(SystemCalls.class)).isTrue();
        assertThat(POLICY.isSystem(AppOps.class)).isFalse();
        FunctionPolicy trusting = policy(List.of(), List.of(), Set.of(Unmarked.class));
        assertThat(refusal(trusting, method(Unmarked.class, "plain", int.class))).isNull();
    }

    @Test
    void aLibrarysClassIsRefusedUnlessMarkedOrAllowed() throws Exception {
        assertThat(refusal(POLICY, method(Unmarked.class, "plain", int.class)))
                .startsWith("refused (not declared callable)")
                .contains("dev.ferry.rpc.policy.other.Unmarked", "[dev.ferry.rpc.policy.app]", "@RpcCallable");
        assertThat(refusal(POLICY, method(MarkedClass.class, "greet", String.class))).isNull();
        assertThat(refusal(POLICY, method(MarkedMethod.class, "marked", int.class))).isNull();
        assertThat(refusal(POLICY, method(MarkedMethod.class, "unmarked", int.class)))
                .startsWith("refused (not declared callable)");
        FunctionPolicy widened = policy(List.of(), List.of("dev.ferry.rpc.policy.other.Unmarked"), Set.of());
        assertThat(refusal(widened, method(Unmarked.class, "plain", int.class))).isNull();
        assertThat(refusal(widened, method(MarkedMethod.class, "unmarked", int.class))).isNotNull();
    }

    @Test
    void withoutApplicationPackagesTheRefusalSaysHowToDeclareThem() throws Exception {
        FunctionPolicy none = policy(List.of(), List.of(), Set.of());
        assertThat(refusal(none, method(AppOps.class, "add", int.class, int.class)))
                .contains("ferry run declares the main class's package", "applicationPackage",
                        "FERRY_APPLICATION_PACKAGES");
    }

    @Test
    void namesCoverClassesNestedClassesAndSubpackagesOnly() {
        NameList names = NameList.of(List.of("com.example.", "org.lib.Api", ""));
        assertThat(names.covers("com.example.Ops")).isTrue();
        assertThat(names.covers("com.example.io.Codec$Part")).isTrue();
        assertThat(names.covers("com.examples.Ops")).isFalse();
        assertThat(names.covers("org.lib.Api$Nested")).isTrue();
        assertThat(names.covers("org.lib.ApiImpl")).isFalse();
        assertThat(names.covers("Ops")).as("the unnamed package").isTrue();
        assertThat(names.covers("java.lang.Runtime")).isFalse();
        assertThat(NameList.of(List.of(".")).covers("Ops")).isTrue();
        assertThat(NameList.of(List.of(".")).covers("a.Ops")).isFalse();
    }
}
