"""Word pools of the chat sessions: people, places, things, and the small talk around them."""

from __future__ import annotations


def _pool(text: str) -> tuple[str, ...]:
    """The items of ``text``, split at ``|`` when it has one, else at spaces."""
    return tuple(text.split("|") if "|" in text else text.split())


NAMES = _pool(
    "Caroline Melanie Joanna Nate Audrey Andrew Evan Sam Deborah Jolene Tim John Maria "
    "Gina Jon Calvin Dave James Priya Omar Lucia Kenji Amara Felix Ingrid Rafael Noor "
    "Tobias Mei Hannah Diego Chloe Marcus Leila Viktor Anika Bruno Sofia Elias Greta "
    "Yusuf Rosa Henrik Aiko Teodor Farah Luca Imani Oskar Beatriz Declan Zara Mateo"
)

TOPICS = _pool(
    "adoption agencies|solar panel installers|sourdough starters|community gardens|"
    "vintage synthesizers|marathon training plans|electric bike conversions|tiny houses|"
    "foster care licensing|beekeeping permits|online coding bootcamps|Montessori schools|"
    "home battery storage|rescue greyhounds|heat pumps|sign language courses|"
    "rooftop beehives|bird migration routes|fermented hot sauces|lighthouse restorations|"
    "pottery kilns|wildfire evacuation plans|ancestry DNA kits|hospice volunteering|"
    "indoor climbing gyms|sailing certifications|wedding photographers|stand-up comedy clubs"
)

EVENTS = _pool(
    "pottery workshop|charity run|jazz concert|poetry slam|farmers market|art exhibition|"
    "book signing|wine tasting|LGBTQ support group|startup pitch night|salsa class|"
    "climate march|family reunion|baby shower|chess tournament|film festival|"
    "open mic night|cooking competition|volunteer cleanup|science fair|trivia night|"
    "dog show|quilting bee|robotics meetup|gospel choir rehearsal|flea market"
)

PLACES = _pool(
    "the Riverside Community Center|Millbrook Park|the old Grange Hall|Harbor Point Pier|"
    "the Lakeview Library|St. Anselm's church hall|the Copperleaf Gallery|Elm Street Commons|"
    "the Westfield Armory|Pinecrest Botanical Garden|the Ferris Street warehouse|"
    "Blue Heron Marina|the Northgate Civic Arena|Willow Creek Fairgrounds|"
    "the Bellmont Hotel ballroom|Saltmarsh Brewery|the Orchard Lane barn|Kestrel Hill Observatory"
)

PET_KINDS = ("puppy", "kitten", "parrot", "rabbit", "tortoise", "hamster", "guinea pig")
PET_NAMES = _pool(
    "Biscuit Pepper Oliver Luna Mochi Pickles Juniper Waffles Clementine Ziggy Noodle "
    "Hazel Bramble Tofu Marble Sprocket Truffle Basil Pippin Domino Cricket Nimbus"
)

ROLES = _pool(
    "pediatric nurse|data analyst|high school chemistry teacher|landscape architect|"
    "sous chef|paralegal|wind turbine technician|UX researcher|social worker|"
    "veterinary assistant|bookkeeper|museum curator|physical therapist|grant writer"
)
COMPANIES = _pool(
    "Halvorsen Logistics|Brightwater Clinic|Tessellate Labs|Marrow & Pine|Quillfeather Press|"
    "Northwind Credit Union|Ostrander Foods|Lumen Transit|Gable & Finch|Corvid Analytics|"
    "Redbud Elementary|Sable Point Hospital|Ironbark Builders|Velda Pharmaceuticals"
)

CITIES = _pool(
    "Lisbon|Kyoto|Reykjavik|Oaxaca|Tbilisi|Cape Town|Vancouver|Edinburgh|Hanoi|Marrakesh|"
    "Ljubljana|Santiago|Tallinn|Queenstown|Cartagena|Bergen|Montreal|Seville|Krakow|Halifax"
)
MONTHS = _pool(
    "January February March April May June July August September October November December"
)

FAVORITE_KINDS = {
    "book": _pool(
        "The Overstory|Middlemarch|Piranesi|The Left Hand of Darkness|Beloved|"
        "A Gentleman in Moscow|Station Eleven|The Remains of the Day|Pachinko|Circe"
    ),
    "band": _pool(
        "The National|Fleetwood Mac|Khruangbin|Big Thief|Talking Heads|Radiohead|"
        "Alabama Shakes|Bon Iver|Vampire Weekend|The Cure"
    ),
    "dish": _pool(
        "shakshuka|pho|chicken mole|mushroom risotto|lamb tagine|pierogi|"
        "bibimbap|jambalaya|pad see ew|feijoada"
    ),
    "painter": _pool(
        "Hilma af Klint|Frida Kahlo|Edward Hopper|Joan Mitchell|Georgia O'Keeffe|"
        "Jacob Lawrence|Agnes Martin|Claude Monet"
    ),
    "movie": _pool(
        "Spirited Away|Moonlight|Paddington 2|The Grand Budapest Hotel|Arrival|"
        "Amelie|Whiplash|Portrait of a Lady on Fire|Coco|Parasite"
    ),
}

HOBBIES = _pool(
    "watercolor painting|rock climbing|woodworking|birdwatching|ceramics|kayaking|"
    "knitting|archery|bouldering|calligraphy|community theater|astrophotography|"
    "fly fishing|roller derby|bonsai|glassblowing|ballroom dancing|mountain biking"
)

ITEMS = _pool(
    "cast-iron skillet|used cello|standing desk|telescope|sewing machine|kayak|"
    "espresso grinder|record player|tent|weighted blanket|film camera|keyboard synthesizer"
)
SHOPS = _pool(
    "a yard sale on Maple Avenue|the Goodwill downtown|Harbor Outfitters|a Craigslist seller|"
    "the flea market in Dunmore|Ostrow's hardware|an estate sale|Marketplace"
)

RACES = ("city half marathon", "Turkey Trot 10k", "lakeside 5k", "trail ultra", "bridge run")
RELATIVES = ("daughter", "son", "niece", "nephew", "grandmother", "brother", "sister")
REL_NAMES = _pool(
    "Ava Leo Mila Theo Iris Jonah Ruby Silas Nora Ezra Willa Otis Hazel Arlo Maeve Jasper"
)

GREETINGS = (
    "Hey {other}! It's been a while, how have you been?",
    "Hi {other}, so good to hear from you again!",
    "{other}! I was just thinking about you this morning.",
    "Morning {other}, got a minute to catch up?",
    "Hey there, {other}! How's your week going?",
)
REACTIONS = (
    "Wow, that's amazing, {other}! How did it go?",
    "Oh that sounds wonderful. I'm so happy for you.",
    "Haha, that's so you. Tell me more!",
    "That must have been a lot to handle, but you always manage.",
    "I love that. You deserve some good news lately.",
    "No way! I would never have guessed that.",
    "That's really brave of you, {other}.",
    "Sounds like a busy week! Don't forget to rest a little.",
    "I'm impressed, honestly. How are you feeling about it?",
    "Oh nice, that reminds me of when we were in school together.",
    "Thanks for telling me, it means a lot that you share this stuff.",
    "That's so cool. Send me pictures next time!",
)
SMALL_TALK = (
    "Work has been hectic, but I'm trying to keep weekends free for myself.",
    "The weather finally turned, so I've been spending more time outside.",
    "I've been sleeping badly, too much coffee probably.",
    "We binge-watched a baking show all Sunday, no regrets.",
    "My neighbor keeps asking me about gardening tips, as if I knew anything.",
    "I cleaned out the garage and found my old yearbooks, so many memories.",
    "The kids have a school project about volcanoes, the kitchen is a disaster.",
    "I keep meaning to call my mom more often, she loves hearing about this stuff.",
    "Traffic was awful this week, I might start taking the train.",
    "I'm trying to read more instead of scrolling on my phone at night.",
    "We had friends over for dinner and stayed up way too late talking.",
    "Honestly I just needed a quiet week, and I finally got one.",
    "I've been thinking a lot about what I want the next few years to look like.",
    "Someone at work brought homemade bread and now everyone wants the recipe.",
)
FAREWELLS = (
    "I have to run, but let's talk again soon, {other}!",
    "Okay, I should get going. Take care of yourself!",
    "Talk soon! Give everyone a hug from me.",
    "Gotta go cook dinner now, but this was lovely.",
)
