// Witness for key partitioning: prints, for each hex-encoded key, the partition the Java
// client's default partitioner picks (Utils.toPositive(Utils.murmur2(bytes)) % partitions),
// computed with Kafka's own kafka-clients jar.
// Usage: java -cp '<kafka libs>/*' Murmur.java <partitions> <hex key>...
import org.apache.kafka.common.utils.Utils;

public class Murmur {
  public static void main(String[] args) {
    int partitions = Integer.parseInt(args[0]);
    for (int i = 1; i < args.length; i++) {
      String hex = args[i];
      byte[] bytes = new byte[hex.length() / 2];
      for (int j = 0; j < bytes.length; j++) {
        bytes[j] = (byte) Integer.parseInt(hex.substring(2 * j, 2 * j + 2), 16);
      }
      System.out.println(Utils.toPositive(Utils.murmur2(bytes)) % partitions);
    }
  }
}
