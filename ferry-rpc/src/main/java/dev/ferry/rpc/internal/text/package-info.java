/** How Ferry writes values into the messages people read (not API). */
package dev.ferry.rpc.internal.text;
