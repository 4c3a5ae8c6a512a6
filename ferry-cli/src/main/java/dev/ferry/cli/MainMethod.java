package dev.ferry.cli;

import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.MethodModel;
import java.lang.reflect.AccessFlag;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.Set;
import java.util.function.Function;

/**
 * Whether java's launcher finds a main method in a class, read from class files without loading
 * them (no static initializer runs, no dependency is resolved), so that {@code ferry run} can say
 * once that there is none instead of letting every worker fail alike.
 *
 * <p>What the JDK 25 launcher accepts ({@code jdk.internal.misc.MethodFinder}, JLS 12.1.4): a
 * {@code void main(String[])} or {@code void main()}, static or not, of any access but private,
 * declared in the class, a superclass, or an interface of either. The answer is "missing" only
 * when every class file of that hierarchy was read; a class file that cannot be found or parsed
 * (a JDK newer than this one, a class of a module the launcher lacks) leaves the verdict to the
 * workers' JVM. That errs on the side of starting the workers: a constraint this check does not
 * model (an instance main in an abstract class, a static one in an interface) is the JVM's to
 * report.
 */
final class MainMethod {

  private static final Set<String> DESCRIPTORS = Set.of("([Ljava/lang/String;)V", "()V");
  // java's launcher starts a subclass of this with JavaFX's own launcher instead of a main method.
  private static final String JAVAFX_APPLICATION = "javafx.application.Application";

  private MainMethod() {}

  /**
   * True when {@code className} surely has no main method: {@code classFiles} gives the bytes of a
   * class by its binary name, or null if it has none.
   */
  static boolean surelyMissing(String className, Function<String, byte[]> classFiles) {
    Deque<String> toRead = new ArrayDeque<>();
    Set<String> seen = new HashSet<>();
    toRead.add(className);
    while (!toRead.isEmpty()) {
      String name = toRead.remove();
      if (!seen.add(name)) {
        continue;
      }
      if (name.equals(JAVAFX_APPLICATION)) {
        return false;
      }
      byte[] bytes = classFiles.apply(name);
      if (bytes == null) {
        return false;
      }
      ClassModel model;
      try {
        model = ClassFile.of().parse(bytes);
      } catch (IllegalArgumentException e) {
        return false;
      }
      for (MethodModel method : model.methods()) {
        if (method.methodName().equalsString("main") && DESCRIPTORS.contains(method.methodType().stringValue())
            && !method.flags().has(AccessFlag.PRIVATE)) {
          return false;
        }
      }
      model.superclass().ifPresent(superclass -> toRead.add(superclass.asInternalName().replace('/', '.')));
      model.interfaces().forEach(face -> toRead.add(face.asInternalName().replace('/', '.')));
    }
    return true;
  }
}
