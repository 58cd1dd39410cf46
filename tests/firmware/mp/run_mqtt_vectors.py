# Real MicroPython: every MQTT packet vector against rbnode.mqtt (run by test_mqtt_micropython).
import sys
from rbnode import mqtt
import mqtt_vectors

n = mqtt_vectors.check_all(mqtt)
print("MQTT-VECTORS-OK", n, sys.implementation.name)
