"""Builds turns.jsonl and questions.jsonl from the dialogues written below (see README.md).

Each exchange is written as turns separated by " | ", the user first, then the assistant, in
turn; its questions name their evidence by the exchange's turn numbers (0 = its first turn).
Every session opens and closes with a short greeting pair from the pools below, so the set
holds the small talk a real conversation log does. Run: python3 build.py (no dependencies).
"""
import json
import re
from pathlib import Path

HERE = Path(__file__).parent

OPENINGS = [
    ("Hi, I'm back.", "Welcome back! What would you like to go over today?"),
    ("Hello again, got a minute?", "Of course, I'm here. What's on your mind?"),
    ("Morning! Can we pick up where we left off?", "Sure, let's continue. Where would you like to start?"),
    ("Hey, quick update and a couple of things to sort out.", "Great, go ahead and I'll help where I can."),
    ("Hi there, I need to think something through.", "Happy to help you think it through. Tell me more."),
]
CLOSINGS = [
    ("Thanks, that's all for now.", "You're welcome. Talk soon!"),
    ("Great, that helps a lot.", "Glad it helped. Good luck with everything."),
    ("OK, I'll let you know how it goes.", "Please do, I'd like to hear how it turns out."),
    ("Perfect, I have to run.", "No problem, take care."),
    ("Cheers, speak later.", "Anytime. See you next time."),
]

# Side talk: each session holds two of these between its exchanges, slots filled in turn, so
# the log also holds everyday chatter no question is about (and that shares everyday words).
SIDE = [
    ("The weather has been {a} all week here. | That can wear you down. Any plans to get outside? | Maybe a walk by the {b} if it clears up. | Sounds like a good way to reset.",
     ["grey and rainy", "unusually warm", "windy and cold", "foggy every morning", "bright but freezing"], ["river", "canal", "park", "old quarry", "allotments"]),
    ("I watched a {a} film last night. | Did you enjoy it? | It was {b}, honestly. | Sometimes that's just what an evening needs.",
     ["Korean thriller", "black-and-white comedy", "nature documentary", "space adventure", "courtroom drama"], ["better than expected", "a bit long", "surprisingly moving", "fun but forgettable", "gripping until the end"]),
    ("I've been sleeping badly, waking up around {a}. | Screens late in the evening can play a part. | I do scroll on my phone in bed, {b}. | Try leaving it in another room for a week.",
     ["four in the morning", "three o'clock", "half past five", "two at night", "dawn"], ["every night", "most nights", "more than I'd like", "out of habit", "far too long"]),
    ("My colleague recommended a podcast about {a}. | Have you started it? | Only the first episode, {b}. | It's nice to have something for the commute.",
     ["the history of maps", "everyday psychology", "famous shipwrecks", "how cities grow", "forgotten inventors"], ["it was quite good", "it was a bit slow", "I liked the hosts", "I'll give it another go", "I was hooked"]),
    ("I'm thinking of learning {a} in the evenings. | That's a rewarding hobby. What draws you to it? | I've always wanted to, and {b}. | Starting small and often is the trick.",
     ["to play the ukulele", "to draw with ink", "to knit", "Italian", "chess properly"], ["a friend offered to teach me", "there's a course nearby", "winter evenings are long", "I found a good app", "it seems calming"]),
    ("My neighbour's {a} kept me awake again. | That's frustrating. Have you mentioned it to them? | Not yet, {b}. | A friendly word usually works better than a note.",
     ["party", "washing machine", "barking puppy", "drilling", "teenager's drum kit"], ["I don't want an argument", "I barely know them", "I keep putting it off", "it's only been twice", "I wasn't sure how"]),
    ("I finally cleaned out the {a} this weekend. | Satisfying! Find anything interesting? | Mostly {b}. | A good clear-out feels great afterwards.",
     ["attic", "kitchen drawers", "wardrobe", "garage", "hall cupboard"], ["old cables", "clothes I never wear", "expired spices", "birthday cards", "random receipts"]),
    ("My phone screen cracked when I dropped it {a}. | Oh no. Is it still usable? | Yes, but {b}. | A screen protector might help until you repair it.",
     ["on the pavement", "in the kitchen", "getting out of the car", "on the stairs", "at the supermarket"], ["the corner is sharp", "the crack runs across the top", "it's hard to read in sunlight", "touch is a bit jumpy", "it looks terrible"]),
    ("I've started drinking {a} instead of coffee in the afternoon. | Any difference so far? | I feel {b}. | Small changes like that add up.",
     ["green tea", "herbal tea", "just water", "rooibos", "decaf"], ["calmer in the evening", "less jittery", "about the same, honestly", "more awake at night, oddly", "less tired after lunch"]),
    ("A friend invited me to a {a} next month. | Are you going? | Probably, {b}. | It could be a nice change of scene.",
     ["pottery workshop", "quiz night", "jazz concert", "climbing session", "wine tasting"], ["if work allows", "it's been ages since I went out", "I'll bring my partner", "tickets are cheap", "I've never tried it"]),
    ("The bus was {a} again this morning. | That's annoying when you have a schedule. | I arrived {b}. | Maybe an earlier bus gives you some slack.",
     ["late", "packed", "cancelled", "diverted", "stuck in traffic"], ["just in time", "ten minutes late", "flustered", "soaked from the rain", "grumpy"]),
]

D = {}

D["trip"] = [
    ("2026-02-03", [
        ("I've finally booked it: my flight to Lisbon leaves on the 14th of March. | Exciting! Is it a direct flight? | Yes, direct, it leaves at 7:40 in the morning, so an early start. | Then pack the night before and book a taxi in advance.",
         [("When does the user travel to Portugal?", [0]), ("At what time of day does the user's plane depart?", [2])]),
        ("I'll be staying for ten days, in a small apartment in Alfama. | Alfama is lovely, very hilly with narrow streets. | That's why I picked it, I like old neighbourhoods. | You'll find plenty of little restaurants with fado music there.",
         [("How long is the user's holiday?", [0]), ("What kind of accommodation did the user book, and in which district?", [0])]),
        ("My sister Marta is joining me for the second half of the trip. | That's nice, will she fly in from somewhere else? | She lives in Madrid, so she'll take the night train. | That sounds like a fun way to arrive.",
         [("Which relative will meet the user partway through the journey?", [0]), ("How is the user's sibling getting there?", [2])]),
    ]),
    ("2026-02-17", [
        ("I want one day trip out of the city. Sintra or Cascais? | Sintra has palaces and forests, Cascais has beaches. | I'm not a beach person at all. | Then Sintra is the better pick; go early to avoid queues.",
         [("Does the user enjoy lying on the sand by the sea?", [2]), ("Which excursion was recommended given the user's tastes?", [3])]),
        ("I'm allergic to shellfish, which worries me a little in Portugal. | It's worth learning the phrase for it and telling waiters. | Could you write it down for me? | 'Sou alérgico a marisco' should do it.",
         [("What food can the user not eat?", [0])]),
        ("My budget for the whole stay is around 1,500 euros, flights excluded. | That's comfortable for ten days in Lisbon if you cook sometimes. | I'll cook breakfast at least. | Good plan, the markets there are excellent.",
         [("How much money does the user plan to spend during the vacation?", [0])]),
    ]),
    ("2026-03-01", [
        ("Bad news, the airline moved my departure to the 15th. | That's annoying. Did they offer any compensation? | A 50 euro voucher, which is something. | Remember to tell your apartment host about the later arrival.",
         [("Did the date of the user's outbound journey change?", [0]), ("What did the carrier give the user for the schedule change?", [2])]),
        ("I bought a Lisboa Card for three days. | It covers public transport and many museums. | I mainly want it for the tram 28 and the Jerónimos monastery. | Both are included, so it should pay off.",
         [("What city pass did the user purchase and for how many days?", [0]), ("Which sights does the user want to visit with it?", [2])]),
    ]),
    ("2026-03-30", [
        ("I'm home. The highlight was the sunset at the Miradouro da Senhora do Monte. | That viewpoint is famous for it. Anything you'd skip next time? | The Time Out market, too crowded for me. | Good to know, it does get packed at lunchtime.",
         [("What was the best moment of the user's time away?", [0]), ("Which food hall disappointed the user?", [2])]),
        ("I lost my sunglasses on the tram, sadly. | Oh no. Did you report it? | No, they were cheap anyway. | Fair enough, not worth the hassle then.",
         [("What did the user leave behind on public transport?", [0])]),
    ]),
]

D["dog"] = [
    ("2026-01-12", [
        ("My dog Biscuit has been limping on his back left leg since Saturday. | How old is he, and is he putting weight on it? | He's seven, a beagle, and he barely puts weight on it. | Then a vet visit soon is wise, it could be a sprain or a ligament.",
         [("Which of the pet's paws is hurting?", [0]), ("What breed and age is the user's animal?", [2])]),
        ("The vet appointment is Thursday at 4:30 with Dr. Okafor. | Good. Write down when the limping started and anything unusual. | I will, he also jumped off the sofa badly last week. | That detail could help the vet a lot.",
         [("When is the animal doctor visit scheduled?", [0]), ("What accident might have caused the injury?", [2])]),
    ]),
    ("2026-01-16", [
        ("The vet says it's a partial tear of the cruciate ligament. | I'm sorry. Did she suggest surgery or rest first? | Strict rest for six weeks, short leash walks only, then we reassess. | That's a common first approach for a partial tear.",
         [("What was the diagnosis for the beagle's leg?", [0]), ("How long must the dog avoid exercise?", [2])]),
        ("He's on an anti-inflammatory, half a tablet twice a day with food. | Give it with meals to protect his stomach. | Yes, she said the same. It costs 38 euros a box. | Ask if a generic version is available, it may be cheaper.",
         [("How often does the pet take his medicine?", [0]), ("What is the price of the dog's pills?", [2])]),
    ]),
    ("2026-02-27", [
        ("Follow-up done: the knee is much more stable now. | That's great news! Can he go back to normal walks? | Gradually, ten more minutes each week. | Build it up slowly and watch for any limping.",
         [("How did the check-up on the pet's joint go?", [0])]),
        ("The vet also said Biscuit should lose two kilos. | Extra weight puts strain on the knee. Any diet advice? | Cut his kibble by a fifth and no more cheese treats. | Carrot sticks make a good low-calorie treat.",
         [("How much weight does the beagle need to shed?", [0]), ("What snack is the user's pet no longer allowed?", [2])]),
    ]),
    ("2026-04-08", [
        ("His annual vaccinations are due on the 20th of April. | I'll keep that in mind. Same clinic? | Yes, and I want to ask about kennel cough too. | Good idea if he'll stay in kennels this summer.",
         [("When are the dog's yearly shots?", [0]), ("What extra protection will the user ask the clinic about?", [2])]),
        ("Pet insurance paid back 80 percent of the knee treatment. | That's a good share. Was it hard to claim? | Just a form and the invoices, it took two weeks. | Glad it went smoothly.",
         [("What portion of the veterinary bill did the policy refund?", [0])]),
    ]),
]

D["move"] = [
    ("2026-04-02", [
        ("We signed the lease on a flat in Leeds, we move on the 1st of June. | Congratulations! How big is the new place? | Two bedrooms, a small garden, and it's twenty minutes from the station on foot. | A garden is a real bonus in a city flat.",
         [("Where is the user relocating to, and when?", [0]), ("Does the new home have outdoor space?", [2])]),
        ("The rent is 1,150 pounds a month, which is a bit more than now. | Is anything included, like water or internet? | Water is included, nothing else. | Then budget for energy and broadband on top.",
         [("How much will the user pay the landlord each month?", [0]), ("Which utility comes with the new tenancy?", [2])]),
    ]),
    ("2026-04-20", [
        ("I got three quotes from removal companies; the cheapest is 640 pounds. | Does that include packing or just transport? | Just transport and two movers, we pack ourselves. | Then start collecting boxes now, it always takes longer than expected.",
         [("What was the lowest price for the movers?", [0]), ("Who will put the belongings in boxes?", [2])]),
        ("We're selling the old sofa because it won't fit through the new door. | Measure twice! Any buyers yet? | Someone offered 90 pounds on a marketplace app. | That's reasonable for a used sofa.",
         [("Why is the user getting rid of the couch?", [0]), ("How much was offered for the piece of furniture?", [2])]),
    ]),
    ("2026-05-25", [
        ("I need to tell the bank, the doctor and the electoral register about the new address. | Don't forget the post redirection too. | Good point, I'll set it up for six months. | Six months usually catches everything important.",
         [("Which organisations must be informed of the change of home?", [0]), ("For how long will mail be forwarded?", [2])]),
        ("Our internet will only be connected on the 9th of June. | So about a week without it. Mobile data as a backup? | Yes, I'll buy a 50 gigabyte data bundle. | That should cover work calls for a week.",
         [("When will the broadband start working at the new flat?", [0])]),
    ]),
    ("2026-06-12", [
        ("We're in! Only one box broke, the one with the wine glasses. | Sorry about the glasses. How's the rest? | Fine, though the boiler makes a strange knocking noise. | Report it to the landlord in writing, it's their repair.",
         [("What got damaged during the relocation?", [0]), ("What problem does the heating system have?", [2])]),
        ("The neighbours brought us a lemon cake as a welcome. | What a kind start. | Yes, an older couple called the Hendersons, very friendly. | It's good to know people nearby.",
         [("What gift did the people next door give?", [0])]),
    ]),
]

D["job"] = [
    ("2026-03-05", [
        ("I've been offered a job as a data analyst at a logistics firm. | Congratulations! Are you leaning towards accepting? | Probably. The salary is 52,000, up from 44,000 now. | That's a solid raise, nearly twenty percent.",
         [("What position was the user offered?", [0]), ("How much would the user earn in the new role?", [2])]),
        ("The catch is they want three days a week in the office. | How far is the office from you? | About fifty minutes by bus each way. | Worth weighing that commute against the raise.",
         [("How many days of on-site work does the employer expect?", [0]), ("How long is the journey to the workplace?", [2])]),
    ]),
    ("2026-03-12", [
        ("I accepted the offer and handed in my notice today. | Big step! How long is your notice period? | One month, so my last day is the 10th of April. | Plenty of time for a proper handover.",
         [("Did the user take the position?", [0]), ("When does the user finish at the current employer?", [2])]),
        ("My manager asked me to document the monthly reporting scripts before I leave. | A handover document is a good parting gift. | I'll write it in the team wiki. | Include where the data comes from and who to ask.",
         [("What was the user asked to write up before departing?", [0])]),
    ]),
    ("2026-04-16", [
        ("First week at the new job done. The team is five people, all friendly. | That's a nice size. What are you working on? | Forecasting delivery delays from weather data. | Sounds like an interesting problem.",
         [("How big is the user's new group of colleagues?", [0]), ("What is the user's first project about?", [2])]),
        ("They use Python and a tool I don't know yet, dbt. | It's a tool for data transformations in SQL, quite popular. | I'll take an online course this weekend. | Its official tutorial is a good place to start.",
         [("Which software is unfamiliar to the user?", [0]), ("How does the user plan to learn it?", [2])]),
    ]),
    ("2026-06-01", [
        ("My probation review went well, they made me permanent. | Well done! Any feedback? | They want me to present more often in team meetings. | A chance to build confidence, start with short updates.",
         [("What was the outcome of the user's trial period evaluation?", [0]), ("What did the employer ask the user to do more of?", [2])]),
    ]),
]

D["recipes"] = [
    ("2026-01-20", [
        ("I want to make a vegetarian lasagne for eight people on Saturday. | Lovely. Spinach and ricotta, or roasted vegetables? | Roasted aubergine and courgette, my friends love those. | Roast them well first so the lasagne isn't watery.",
         [("What dish is the user cooking for the weekend dinner, and for how many guests?", [0]), ("Which vegetables will go into the meal?", [2])]),
        ("One guest, Priya, can't eat gluten. | Gluten-free lasagne sheets exist, or use thin slices of courgette instead. | I'll use the gluten-free sheets, easier. | Check the cooking time on the pack, they can soften faster.",
         [("What dietary restriction does one of the visitors have?", [0])]),
    ]),
    ("2026-01-26", [
        ("The lasagne was a hit, but the béchamel went lumpy. | Whisk the milk in slowly and keep it warm. | I poured it all in at once, that was the mistake. | Next time add it in three or four parts.",
         [("What went wrong with the white sauce?", [0]), ("How was the dinner received?", [0])]),
        ("For dessert I made a lemon tart from my grandmother's notebook. | How did it turn out? | The crust was perfect, the filling slightly too sour. | Add a spoonful more sugar next time.",
         [("Where did the pudding recipe come from?", [0]), ("What was wrong with the sweet course?", [2])]),
    ]),
    ("2026-02-22", [
        ("I'm trying to cook more with lentils to eat less meat. | Red lentils in a dal are a great start. | I made one last night with coconut milk and it was great. | Add some lime juice at the end to brighten it.",
         [("What is the user doing to reduce their meat consumption?", [0]), ("What did the user prepare yesterday evening?", [2])]),
        ("Also, my sourdough starter died while I was away. | It happens. You can dry some next time as a backup. | How do I do that? | Spread a thin layer on baking paper, let it dry, and keep the flakes in a jar.",
         [("What happened to the user's bread culture?", [0])]),
    ]),
    ("2026-03-15", [
        ("My oven runs about 20 degrees hotter than the dial says. | An oven thermometer would confirm it. | I bought one; it's 20 degrees hotter indeed. | Then simply set the dial lower from now on.",
         [("Is the user's cooker accurate?", [0])]),
        ("I'm hosting a pancake brunch on Sunday for my nephew's birthday. | Fun! Sweet, savoury or both? | Both, with blueberries and also ham and cheese. | Keep finished pancakes warm in a low oven.",
         [("What celebration is the user catering for and with what food?", [0])]),
    ]),
]

D["bookclub"] = [
    ("2026-02-08", [
        ("Our book club picked a novel about a lighthouse keeper for March. | Nice. Who chose it? | Tom did, he always picks sad books. | Maybe suggest something lighter for April.",
         [("What is the story the reading group will discuss next month about?", [0]), ("Which member made the choice, and what kind of books does he prefer?", [2])]),
        ("We meet on the first Tuesday of each month at the library café. | A regular slot makes it easier to keep going. | Yes, seven of us come most months. | That's a good group size for discussion.",
         [("When and where does the reading circle gather?", [0]), ("How many people usually attend?", [2])]),
    ]),
    ("2026-03-04", [
        ("I only managed to read half the lighthouse book before the meeting. | Did you still join? | Yes, I listened and avoided spoilers, badly. | Ha, that's hard with an ending everyone discusses.",
         [("Did the user finish the novel in time?", [0])]),
        ("It's my turn to choose for May. I'm thinking of a comic novel. | Something funny would be a nice change. | Maybe one set in a bookshop, under 300 pages. | Short and light sounds right for spring.",
         [("What genre will the user suggest for the group's next pick?", [0]), ("How long should the chosen title be?", [2])]),
    ]),
    ("2026-05-06", [
        ("The meeting was at my place this time and I baked scones. | How did the discussion go? | Everyone laughed a lot; even Tom liked the book. | Sounds like a successful pick.",
         [("What did the user make for the gathering at home?", [0]), ("How did the members react to the user's selection?", [2])]),
        ("We decided to read one classic a year, starting with Middlemarch in autumn. | That's a long one, around 800 pages. | We'll split it over two meetings. | Sensible, it reads better in parts.",
         [("Which older work will the club tackle later this year?", [0]), ("How will they handle such a long text?", [2])]),
    ]),
]

D["garden"] = [
    ("2026-03-18", [
        ("I want to grow tomatoes on my balcony this year. | Great! Which direction does it face? | South-west, it gets sun from noon. | Perfect for tomatoes, they love heat.",
         [("Which plants does the user want to raise outdoors at home?", [0]), ("How much sunlight does the balcony get?", [2])]),
        ("I sowed cherry tomato seeds indoors on the windowsill today. | Keep the soil moist and warm. | They're in a propagator at about 22 degrees. | That's ideal for germination.",
         [("Where did the user start the seedlings?", [0])]),
    ]),
    ("2026-05-10", [
        ("The seedlings are tall and leggy, almost falling over. | They need more light; a brighter spot or a grow lamp helps. | I'll move them outside during the day. | Harden them off gradually over a week.",
         [("What is wrong with the young tomato plants?", [0])]),
        ("Slugs ate two of my basil plants overnight. | Try copper tape around the pots. | I'll also put the basil higher up, on a shelf. | Raising them helps a lot too.",
         [("What pest damaged the herbs?", [0]), ("How will the user protect the remaining herbs?", [2])]),
    ]),
    ("2026-08-02", [
        ("First harvest: about a kilo of cherry tomatoes this week! | Wonderful. Any problems? | Some split after heavy rain. | Regular watering prevents most splitting.",
         [("How much fruit did the user pick from the balcony?", [0]), ("Why did some of the crop crack?", [2])]),
    ]),
]

D["fitness"] = [
    ("2026-01-05", [
        ("My goal this year is to run a half marathon in October. | Great goal. What's your current running like? | I run 5 km twice a week, quite slowly. | That's a good base; we can build up from there.",
         [("What race is the user training for and when?", [0]), ("How much does the user jog at the moment?", [2])]),
        ("My knees hurt after longer runs in my old shoes. | How old are the shoes? | Over three years, they're worn flat. | Time for new ones; a running shop can check your stride.",
         [("What discomfort does the user feel after long distances?", [0])]),
    ]),
    ("2026-03-09", [
        ("I bought new trainers with more cushioning and the pain is gone. | Excellent! How far are you running now? | My long run is 12 km on Sundays. | You're well on track.",
         [("Did new footwear solve the user's joint problem?", [0]), ("What distance is the user's weekly long outing?", [2])]),
        ("I also joined a running club that meets Wednesday evenings. | Running with others helps motivation. | Yes, and they do interval sessions on the track. | Intervals will improve your speed.",
         [("What group did the user sign up for?", [0])]),
    ]),
    ("2026-10-20", [
        ("I finished the half marathon in 2 hours and 6 minutes! | Congratulations, that's a great first time! | I'd hoped for under 2:10, so I'm very happy. | You beat your target by four minutes.",
         [("What was the user's finishing time in the race?", [0]), ("Did the user meet the goal they set?", [2])]),
    ]),
]

D["finance"] = [
    ("2026-02-01", [
        ("I want to save for a new car, about 12,000 euros within two years. | That's 500 a month. Does that fit your budget? | Tight, but possible if I cut eating out. | Setting up an automatic transfer on payday makes it easier.",
         [("What is the user putting money aside for?", [0]), ("Which spending will the user reduce?", [2])]),
        ("I pay for four streaming services, which seems silly. | Which ones do you actually use? | Honestly just two of them. | Cancelling the other two saves money at once.",
         [("How many video subscriptions does the user have?", [0])]),
    ]),
    ("2026-06-15", [
        ("My savings account now holds 3,100 euros for the car. | You're ahead of plan! | A tax refund of 600 euros helped. | Nice boost.",
         [("How much has the user set aside so far for the vehicle?", [0]), ("What unexpected money helped?", [2])]),
        ("My phone contract ends in August and I'll switch to a SIM-only plan. | That's usually much cheaper. | About 12 euros instead of 40 a month. | That's a big saving over a year.",
         [("When does the user's mobile agreement expire?", [0]), ("What will the user's new phone bill be?", [2])]),
    ]),
]

D["wedding"] = [
    ("2026-04-11", [
        ("My best friend Sam is getting married on the 5th of September and I'm the best man. | What an honour! Have you started on the speech? | Not yet, I'm nervous about speaking in public. | Start early and practise it out loud a few times.",
         [("What role does the user have at the ceremony, and when is it?", [0]), ("What worries the user about the toast?", [2])]),
        ("The wedding is in a barn in the Cotswolds. | That sounds beautiful. Will you stay nearby? | I booked a room at a pub two miles away. | Arrange a taxi back, country roads are dark.",
         [("Where is the celebration being held?", [0]), ("Where will the user sleep that night?", [2])]),
    ]),
    ("2026-08-20", [
        ("I wrote the speech; it's about four minutes long. | That's a good length. Any stories in it? | The time we got lost camping in Wales as teenagers. | A funny story from long ago works well.",
         [("How long will the user talk for at the reception?", [0]), ("What anecdote did the user include?", [2])]),
        ("I still need to organise the stag weekend: we're going to Edinburgh. | How many are going? | Nine of us, the last weekend of August. | Book accommodation soon, the festival is on then.",
         [("Where is the bachelor party taking place?", [0]), ("How many guys are joining the trip?", [2])]),
    ]),
]

# Questions whose answer spans sessions, by turn id (build checks that each id exists).
CROSS = [
    ("Between booking and going, how did the user's departure date change?", ["trip-s1-t03", "trip-s3-t03"]),
    ("What has the dog's knee injury been like, from diagnosis to recovery?", ["dog-s2-t03", "dog-s3-t03"]),
    ("How did the user's relocation go, from signing for the flat to settling in?", ["move-s1-t03", "move-s4-t03"]),
    ("How did the user's career switch unfold, from the proposal to saying yes?", ["job-s1-t03", "job-s2-t03"]),
    ("How far has the user come in jogging, from the start of the year to race day?", ["fitness-s1-t05", "fitness-s3-t03"]),
    ("How close is the user to having enough for a vehicle?", ["finance-s1-t03", "finance-s2-t03"]),
    ("How did the balcony crop go, from seed to picking?", ["garden-s1-t11", "garden-s3-t03"]),
    ("What did the reading group take on in early spring, and did the user keep up?", ["bookclub-s1-t03", "bookclub-s2-t03"]),
]

STOP = set("""a an the and or but of to in on at for with from by is are was were be been am do does did
has have had will would can could should may might must not no yes this that these those it its
it's i i'm my me we our us you your he his him she her they their them what which who whom when where
why how there here about into over under after before up down out as so than then too very just also
any some all each much many more most other another such only own same one two user user's""".split())


def words(text):
    found = set()
    for w in re.findall(r"[a-zà-ÿ0-9']+", text.lower()):
        w = w.strip("'")
        if w.endswith("'s"):
            w = w[:-2]
        if len(w) < 3 or w in STOP:
            continue
        # A crude stem: enough to say whether a question repeats a turn's words.
        for suffix in ("ing", "es", "s", "ed"):
            if w.endswith(suffix) and len(w) - len(suffix) >= 3:
                w = w[: -len(suffix)]
                break
        found.add(w)
    return found


def side_talk(texts, side):
    """Adds side talk number `side` to the session's texts; answers the next number. Slots are chosen so no two are alike."""
    template, first, second = SIDE[side % len(SIDE)]
    rounds = side // len(SIDE)
    a = first[(side + rounds // len(second)) % len(first)]
    b = second[rounds % len(second)]
    texts.extend(p.strip() for p in template.format(a=a, b=b).split(" | "))
    return side + 1


def main():
    turns = []
    questions = []
    pool = 0
    side = 0
    for dialogue, sessions in D.items():
        for s_index, (date, exchanges) in enumerate(sessions, start=1):
            session = f"s{s_index}"
            texts = []
            opening = OPENINGS[pool % len(OPENINGS)]
            closing = CLOSINGS[pool % len(CLOSINGS)]
            pool += 1
            texts.extend(opening)
            marks = []
            for e_index, (written, asked) in enumerate(exchanges):
                if e_index > 0:
                    side = side_talk(texts, side)
                start = len(texts)
                parts = [p.strip() for p in written.split(" | ")]
                texts.extend(parts)
                for question, evidence in asked:
                    marks.append((question, [start + i for i in evidence]))
            side = side_talk(texts, side)
            texts.extend(closing)
            ids = [f"{dialogue}-{session}-t{n + 1:02d}" for n in range(len(texts))]
            for n, text in enumerate(texts):
                turns.append({"id": ids[n], "dialogue": dialogue, "session": session, "date": date, "speaker": "user" if n % 2 == 0 else "assistant", "text": text})
            for question, evidence in marks:
                ev_text = " ".join(texts[i] for i in evidence)
                questions.append({"question": question, "evidence": [ids[i] for i in evidence], "shares_words": bool(words(question) & words(ev_text))})
    by_id = {t["id"]: t["text"] for t in turns}
    for question, evidence in CROSS:
        assert all(i in by_id for i in evidence), evidence
        ev_text = " ".join(by_id[i] for i in evidence)
        questions.append({"question": question, "evidence": evidence, "shares_words": bool(words(question) & words(ev_text))})
    for n, q in enumerate(questions, start=1):
        q["id"] = f"q{n:03d}"
    with open(HERE / "turns.jsonl", "w") as f:
        for t in turns:
            f.write(json.dumps(t, ensure_ascii=False) + "\n")
    with open(HERE / "questions.jsonl", "w") as f:
        for q in questions:
            f.write(json.dumps({"id": q["id"], "question": q["question"], "evidence": q["evidence"], "shares_words": q["shares_words"]}, ensure_ascii=False) + "\n")
    dialogues = len(D)
    sessions = sum(len(s) for s in D.values())
    sharing = sum(q["shares_words"] for q in questions)
    print(f"{dialogues} dialogues, {sessions} sessions, {len(turns)} turns, {len(questions)} questions ({sharing} share a content word with their evidence)")


main()
