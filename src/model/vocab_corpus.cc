// Built-in training text (written for met; plain prose about a small town).
#include "model/vocab_corpus.h"

namespace met {

std::string_view vocab_training_text() {
  return "The town by the river was small, and everyone who lived there knew the others by "
         "name. In the morning the baker opened his shop before the sun came up, and the "
         "smell of fresh bread moved down the street and into the houses. Children walked "
         "to school in little groups, talking about the games they would play after their "
         "lessons. The teacher was a patient woman who liked to read stories out loud, and "
         "when she read, the whole room was quiet. There was a story about a boat that "
         "could sail over the hills, and another about a girl who found a door in the side "
         "of a tree. The children asked for the same stories again and again, and she "
         "always said yes. In the afternoon the farmers came in from the fields with their "
         "carts, and the market filled with apples, potatoes, cheese and eggs. People "
         "traded news as well as food: who was getting married, whose cow had run away, "
         "what the weather would be on Sunday. The old man who kept the clock in the tower "
         "climbed the stairs every evening to wind it, and he said that the town would keep "
         "good time as long as his knees held out. When the lamps were lit, families sat "
         "down to dinner and talked about their day. Some nights there was music in the "
         "square, with a violin, a drum and a voice that everyone agreed was the best in "
         "the valley. Then the music stopped, the windows went dark one after another, and "
         "the river went on running under the bridge, the way it had for a thousand years "
         "before the town was there and would for a thousand more. Numbers were written on "
         "the doors: 1, 2, 3, 10, 42, 100, 2024. Questions were asked and answered: what? "
         "why? how much? It is 12 o'clock; the price is $3.50 (or less).";
}

}  // namespace met
